package jetstream

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/garm-dev/garm/daemon/internal/streamcheck"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go/jetstream"
)

// CheckStream says what keeps the ledger stream from taking the rows a
// Recorder publishes: it must exist, its subjects must cover every ledger
// subject, it must acknowledge publishes and it must not be sealed. The
// error names each problem and how to fix it; garmd creates and changes no
// stream.
func CheckStream(ctx context.Context, js jetstream.JetStream) error {
	_, errs := streamcheck.Check(ctx, js, streamcheck.Stream{
		Noun: "ledger", Name: wire.LedgerStream, Filter: wire.LedgerStreamSubjects, Publishes: ledgerSubjects,
		Create: fmt.Sprintf("create it with the subjects %q, e.g. nats stream add %s --subjects '%s' --storage file --defaults",
			wire.LedgerStreamSubjects, wire.LedgerStream, wire.LedgerStreamSubjects),
		NoAck: "no batch could be confirmed",
	})
	return errors.Join(errs...)
}

// ledgerSubjects is every subject wire.LedgerSubject can make: its tenant
// and app tokens are single tokens, so two "*" match them all.
var ledgerSubjects = func() string {
	tokens := strings.Split(wire.LedgerSubject("tenant", "app"), ".")
	tokens[len(tokens)-2], tokens[len(tokens)-1] = "*", "*"
	return strings.Join(tokens, ".")
}()
