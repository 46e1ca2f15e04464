package jetstream

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go/jetstream"
)

// CheckStream says what keeps the ledger stream from taking the rows a
// Recorder publishes: it must exist, its subjects must cover every ledger
// subject, it must acknowledge publishes and it must not be sealed. The
// error names each problem and how to fix it; garmd creates and changes no
// stream.
func CheckStream(ctx context.Context, js jetstream.JetStream) error {
	s, err := js.Stream(ctx, wire.LedgerStream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("ledger stream %s does not exist; create it with the subjects %q, e.g. nats stream add %s --subjects '%s' --storage file --defaults",
			wire.LedgerStream, wire.LedgerStreamSubjects, wire.LedgerStream, wire.LedgerStreamSubjects)
	}
	if err != nil {
		return fmt.Errorf("ledger stream %s cannot be looked up: %w", wire.LedgerStream, err)
	}
	cfg := s.CachedInfo().Config
	var errs []error
	if !wire.Covers(cfg.Subjects, ledgerSubjects) {
		errs = append(errs, fmt.Errorf("ledger stream %s has the subjects %q, which do not cover the ledger subjects %s; add %q to them, e.g. nats stream edit %s --subjects '%s'",
			wire.LedgerStream, cfg.Subjects, ledgerSubjects, wire.LedgerStreamSubjects, wire.LedgerStream,
			strings.Join(slices.Concat(cfg.Subjects, []string{wire.LedgerStreamSubjects}), ",")))
	}
	if cfg.NoAck {
		errs = append(errs, fmt.Errorf("ledger stream %s does not acknowledge publishes (no_ack), so no batch could be confirmed; recreate it without no_ack", wire.LedgerStream))
	}
	if cfg.Sealed {
		errs = append(errs, fmt.Errorf("ledger stream %s is sealed and takes no new message; point garmd at a stream that is not", wire.LedgerStream))
	}
	return errors.Join(errs...)
}

// ledgerSubjects is every subject wire.LedgerSubject can make: its tenant
// and app tokens are single tokens, so two "*" match them all.
var ledgerSubjects = func() string {
	tokens := strings.Split(wire.LedgerSubject("tenant", "app"), ".")
	tokens[len(tokens)-2], tokens[len(tokens)-1] = "*", "*"
	return strings.Join(tokens, ".")
}()
