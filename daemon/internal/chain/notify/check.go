package notify

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go/jetstream"
)

// CheckStream says what keeps GARM_NOTIFY from taking the rows a Notifier
// publishes: it must exist, its subjects must cover every notify subject, it
// must acknowledge publishes and it must not be sealed. The error names
// every problem at once and how to fix it; garmd creates and changes no
// stream. How long the stream keeps rows, and how it makes room, is the
// operator's choice: a notification is not a record.
func CheckStream(ctx context.Context, js jetstream.JetStream) error {
	s, err := js.Stream(ctx, wire.NotifyStream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("notify stream %s does not exist; create it with the subjects %q, e.g. nats stream add %s --subjects '%s' --storage file --defaults",
			wire.NotifyStream, wire.NotifyStreamSubjects, wire.NotifyStream, wire.NotifyStreamSubjects)
	}
	if err != nil {
		return fmt.Errorf("notify stream %s cannot be looked up: %w", wire.NotifyStream, err)
	}
	cfg := s.CachedInfo().Config
	var errs []error
	if !wire.Covers(cfg.Subjects, notifySubjects) {
		errs = append(errs, fmt.Errorf("notify stream %s has the subjects %q, which do not cover the notify subjects %s; add %q to them, e.g. nats stream edit %s --subjects '%s'",
			wire.NotifyStream, cfg.Subjects, notifySubjects, wire.NotifyStreamSubjects, wire.NotifyStream,
			strings.Join(slices.Concat(cfg.Subjects, []string{wire.NotifyStreamSubjects}), ",")))
	}
	if cfg.NoAck {
		errs = append(errs, fmt.Errorf("notify stream %s does not acknowledge publishes (no_ack), so every notification would count as failed; recreate it without no_ack", wire.NotifyStream))
	}
	if cfg.Sealed {
		errs = append(errs, fmt.Errorf("notify stream %s is sealed and takes no new message; point garmd at a stream that is not", wire.NotifyStream))
	}
	return errors.Join(errs...)
}

// notifySubjects is every subject wire.NotifySubject can make: a tenant
// token, then the tool's FQN as one or more tokens.
var notifySubjects = func() string {
	tokens := strings.Split(wire.NotifySubject("tenant", "fqn"), ".")
	tokens[len(tokens)-2], tokens[len(tokens)-1] = "*", ">"
	return strings.Join(tokens, ".")
}()
