package audit

import (
	"context"

	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
)

// Outcomes a Sink sees besides the ledger's ok, denied and error.
const (
	// OutcomeIntent marks the row written ahead of the tool call; an outcome
	// row with no intent row means the call was refused before the tool was
	// reached.
	OutcomeIntent = "intent"
)

// Sink writes audit rows synchronously.
type Sink interface {
	// Write returns only once e is durably accepted, or with the error that
	// kept it from being accepted. It does not retain e: the caller may go
	// on changing the row (the intent row becomes the outcome row). Writing
	// the same event id and outcome twice holds the row once.
	Write(ctx context.Context, e *ledgerv1.Event) error
}
