package notify

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/garm-dev/garm/daemon/internal/streamcheck"
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
	_, errs := streamcheck.Check(ctx, js, streamcheck.Stream{
		Noun: "notify", Name: wire.NotifyStream, Filter: wire.NotifyStreamSubjects, Publishes: notifySubjects,
		Create: fmt.Sprintf("create it with the subjects %q, e.g. nats stream add %s --subjects '%s' --storage file --defaults",
			wire.NotifyStreamSubjects, wire.NotifyStream, wire.NotifyStreamSubjects),
		NoAck: "every notification would count as failed",
	})
	return errors.Join(errs...)
}

// notifySubjects is every subject wire.NotifySubject can make: a tenant
// token, then the tool's FQN as one or more tokens.
var notifySubjects = func() string {
	tokens := strings.Split(wire.NotifySubject("tenant", "fqn"), ".")
	tokens[len(tokens)-2], tokens[len(tokens)-1] = "*", ">"
	return strings.Join(tokens, ".")
}()
