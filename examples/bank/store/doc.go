// Package store is the example bank's core: an in-memory record of
// customers, accounts, cards and payments that the bank's three tool
// services (accounts, cards, payments) share, as the services in front of a
// real bank share its core banking system. A payment the payments service
// makes is therefore taken from the balance the accounts service reports.
//
// It owns the bank's rules about its own state and refuses what breaks them
// with the toolbind refusal a real bank would answer with, so a service
// returns the store's error unchanged: an unknown customer, account, card or
// payment is 404; freezing a frozen card, unfreezing an active one, or
// reusing an idempotency key for a different payment is 409; unfreezing a
// card frozen as stolen, paying in a currency other than the account's, or
// paying more than is available is 422.
//
// A payment is pending when it is made and sent once the settle delay has
// passed (WithSettleDelay), worked out from the store's clock (WithClock)
// whenever it is read, so tests decide the time and nothing runs in the
// background. A pending payment is taken from the account's available
// balance; a sent one from its settled balance too.
//
// What is deliberately not here: checking what a caller sent against the
// contract (the services do that with the contract's protovalidate rules)
// and anything about who is asking, which is garmd's. Every method is safe
// for concurrent use and returns copies, never the store's own records.
package store
