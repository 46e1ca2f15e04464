// Package streamcheck is what garmd checks of every JetStream stream it
// publishes to before it starts: that the stream exists, takes every subject
// garmd will publish there, acknowledges publishes and is not sealed. Each
// adapter that publishes (the ledger, the audit sink, notify) adds its own
// checks on the configuration it gets back. CheckReplication checks, of
// every stream and bucket garmd uses, the replicas against --min-replicas
// (warning of one replica on a clustered JetStream) and, where a publisher
// retries under one message id, that the duplicate window outlasts its
// retries.
//
// It creates and changes nothing: streams are the operator's, and a problem
// is reported with how to fix it, every problem at once, rather than
// discovered on the first call.
package streamcheck

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go/jetstream"
)

// Stream names a stream garmd publishes to and what it publishes there.
type Stream struct {
	// Noun names the stream in problems: "ledger", "audit", "notify".
	Noun string
	// Name is the stream's name, e.g. wire.LedgerStream.
	Name string
	// Filter is the subject filter the operator is told to give it, e.g.
	// wire.LedgerStreamSubjects.
	Filter string
	// Publishes is every subject garmd publishes there, as a filter (e.g.
	// "garm.v1.ledger.*.*"): the stream's subjects must cover it.
	Publishes string
	// Create is how to create the stream, a command shown when it is
	// missing.
	Create string
	// NoAck is what is lost when the stream does not acknowledge.
	NoAck string
}

// Check looks s up and returns its configuration with the problems every
// stream garmd publishes to must not have. A missing stream, or one that
// cannot be looked up, is the error and the configuration is nil.
func Check(ctx context.Context, js jetstream.JetStream, s Stream) (*jetstream.StreamConfig, []error) {
	stream, err := js.Stream(ctx, s.Name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, []error{fmt.Errorf("%s stream %s does not exist; %s", s.Noun, s.Name, s.Create)}
	}
	if err != nil {
		return nil, []error{fmt.Errorf("%s stream %s cannot be looked up: %w", s.Noun, s.Name, err)}
	}
	cfg := stream.CachedInfo().Config
	var errs []error
	if !wire.Covers(cfg.Subjects, s.Publishes) {
		errs = append(errs, fmt.Errorf("%s stream %s has the subjects %q, which do not cover the %s subjects %s; add %q to them, e.g. nats stream edit %s --subjects '%s'",
			s.Noun, s.Name, cfg.Subjects, s.Noun, s.Publishes, s.Filter, s.Name,
			strings.Join(slices.Concat(cfg.Subjects, []string{s.Filter}), ",")))
	}
	if cfg.NoAck {
		errs = append(errs, fmt.Errorf("%s stream %s does not acknowledge publishes (no_ack), so %s; recreate it without no_ack", s.Noun, s.Name, s.NoAck))
	}
	if cfg.Sealed {
		errs = append(errs, fmt.Errorf("%s stream %s is sealed and takes no new message; point garmd at a stream that is not", s.Noun, s.Name))
	}
	return &cfg, errs
}
