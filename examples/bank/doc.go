// Package bank is garm's realistic example: a small retail bank whose tools
// an AI support assistant, its human colleagues and a payments desk call
// through garmd. It is the first thing the dev stack (examples/devstack)
// serves.
//
// The contract is three proto packages and a shared taxonomy, under proto/:
//
//   - accounts.v1.AccountsService: get_balance and get_customer, whose
//     answer labels each field of a customer's record (the email address is
//     cut to its domain for a caller below CONFIDENTIAL, the national id is
//     withheld below RESTRICTED and counted on the ledger when read);
//   - cards.v1.CardsService: list_cards (card numbers shown as their first
//     six and last four digits to most callers), freeze_card and
//     unfreeze_card, writes that undo each other and that a human is told of;
//   - payments.v1.PaymentsService: initiate_payment, irreversible, so it
//     needs a human approver's grant for exactly its amount, currency and
//     beneficiary and is audited before it runs; and get_payment_status;
//   - bank.v1: the compartments (pii-contact, pii-identity, financial,
//     card-data, any-customer), tool sets (support, payments, self-service)
//     and principal attributes (customer_id, accounts) the three share.
//
// Which records a caller reaches is declared too, as instance rules
// (docs/decisions/0098): a caller without any-customer may ask only about
// the customer its token names, keeps only the accounts its token lists,
// pays only from them, and is shown only their payments (any other answers
// as a payment that does not exist); an agent pays at most a fixed amount
// per call; and only staff freeze or unfreeze a card (0099). The handlers
// hold none of this.
//
// gen/ is generated from proto/ by `make generate`; catalogue.yaml
// (ManifestPath) builds the catalogue garmd serves; personas.yaml
// (PersonasPath) is who may call what, for the dev identity provider.
//
// The services — packages accounts, cards and payments, over the in-memory
// store of package store — return full answers and never redact: what each
// caller sees is garmd's decision, made from the contract. They refuse what
// a bank would, with the toolbind codes the contract's guidance names.
// Services builds all three on one fresh store holding the demo data whose
// ids the Demo constants name; a garmtool.Service serves one proto package,
// so there are three to run.
package bank
