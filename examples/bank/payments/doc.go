// Package payments implements payments.v1.PaymentsService, the example
// bank's outgoing payments: initiate_payment and get_payment_status.
//
// initiate_payment is the bank's one irreversible tool. By the time a call
// reaches it, garmd has checked the caller, a human approver's single-use
// grant for exactly this amount, currency and IBAN, and written the call to
// the audit stream; the service does not check any of that again (it never
// sees who is calling). What it owns is what the bank itself would refuse:
// a request that breaks the contract's protovalidate rules (400: the GBP
// limit is a CEL rule there), an IBAN whose check digits are wrong, a
// currency other than the account's or more than the account has available
// (422), an unknown account (404), and an idempotency key reused for a
// different payment (409).
//
// The idempotency key is the runner's: garmd lets only a caller with an exec
// claim set the request's idempotency_key, and forwards it on the
// invocation too. The service honours the request's field, or the
// invocation's key when the field is empty: a retry with the same key is
// answered with the payment the first call made, and nothing is paid twice.
package payments
