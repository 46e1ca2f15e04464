// Package accounts implements accounts.v1.AccountsService, the example
// bank's customer records: get_balance and get_customer.
//
// It answers in full. A customer's email address, phone number, date of
// birth and national id go back to garmd whole, whoever is asking, because
// the contract labels each field and garmd redacts the answer for each
// caller (a tool never sees who the caller is, so it could not decide even
// if it tried). What it does own: checking a request against the contract's
// protovalidate rules (a tool is reachable by anything on its bus, not only
// through garmd), and refusing an unknown customer with 404, as the
// contract's guidance tells callers.
package accounts
