// Package cards implements cards.v1.CardsService, the example bank's
// payment cards: list_cards, freeze_card and unfreeze_card.
//
// It answers in full: a card's whole number goes back to garmd, which shows
// most callers only its first six and last four digits, as the contract
// labels it. It refuses what a card team would: an unknown customer or card
// is 404, freezing a frozen card or unfreezing an active one is 409, and a
// card frozen as stolen is never unfrozen (422) — the customer is sent a new
// one. A request that breaks the contract's protovalidate rules is 400, even
// though garmd checks them first, because a tool is reachable by anything
// on its bus.
//
// Freezing and unfreezing change the card at once. The human the contract
// says is told of each (MODE_NOTIFY) is told by garmd after the call; the
// service does not wait for anyone.
package cards
