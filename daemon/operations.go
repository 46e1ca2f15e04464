package garmd

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"

	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"

	"github.com/garm-dev/garm/daemon/internal/audit"
	"github.com/garm-dev/garm/daemon/internal/chain/authn"
	"github.com/garm-dev/garm/daemon/internal/metrics"
	"github.com/garm-dev/garm/daemon/internal/replay"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// countingJetStream is JetStream with every publish counted by what it was
// for and how it ended. Everything garmd publishes to a stream — ledger
// batches, audit rows, notifications, spent grants — goes through it.
type countingJetStream struct {
	jetstream.JetStream
	ops *metrics.Operations
}

func (c countingJetStream) Publish(ctx context.Context, subject string, data []byte, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	ack, err := c.JetStream.Publish(ctx, subject, data, opts...)
	c.ops.CountPublish(streamOf(subject), publishResult(err))
	return ack, err
}

func (c countingJetStream) PublishMsg(ctx context.Context, msg *nats.Msg, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	ack, err := c.JetStream.PublishMsg(ctx, msg, opts...)
	c.ops.CountPublish(streamOf(msg.Subject), publishResult(err))
	return ack, err
}

// The subject prefixes of the streams garmd publishes to, from the wire
// package's own subject builders.
var (
	ledgerPrefix      = strings.TrimSuffix(wire.LedgerSubject("t", "a"), "t.a")
	auditPrefix       = strings.TrimSuffix(wire.AuditSubject("t", "a"), "t.a")
	notifyPrefix      = strings.TrimSuffix(wire.NotifySubject("t", "f"), "t.f")
	grantsSpentPrefix = "$KV." + wire.GrantsSpentBucket + "."
)

// streamOf is the stream label of a publish to subject.
func streamOf(subject string) metrics.Stream {
	switch {
	case strings.HasPrefix(subject, ledgerPrefix):
		return metrics.StreamLedger
	case strings.HasPrefix(subject, auditPrefix):
		return metrics.StreamAudit
	case strings.HasPrefix(subject, notifyPrefix):
		return metrics.StreamNotify
	case strings.HasPrefix(subject, grantsSpentPrefix):
		return metrics.StreamGrantsSpent
	}
	return metrics.StreamOther
}

// publishResult is how a publish that returned err ended: a timeout is told
// apart because its outcome is unknown, not failed.
func publishResult(err error) metrics.PublishResult {
	var apiErr *jetstream.APIError
	switch {
	case err == nil:
		return metrics.PublishOK
	case errors.As(err, &apiErr):
		return metrics.PublishRefused
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout):
		return metrics.PublishTimeout
	}
	return metrics.PublishError
}

// countingSpender counts every spend by its result.
type countingSpender struct {
	replay.Spender
	ops *metrics.Operations
}

func (c countingSpender) Spend(ctx context.Context, key, callID string) error {
	err := c.Spender.Spend(ctx, key, callID)
	switch {
	case err == nil:
		c.ops.CountSpend(metrics.SpendSpent)
	case errors.Is(err, replay.ErrSpent):
		c.ops.CountSpend(metrics.SpendAlreadySpent)
	default:
		c.ops.CountSpend(metrics.SpendUnavailable)
	}
	return err
}

// countingSink counts every audit row the sink did not accept.
type countingSink struct {
	audit.Sink
	ops *metrics.Operations
}

func (c countingSink) Write(ctx context.Context, e *ledgerv1.Event) error {
	err := c.Sink.Write(ctx, e)
	if err != nil {
		c.ops.CountAuditWriteFailure()
	}
	return err
}

// busEventHandlers say in garmd's structured log what happens to its bus
// connection: losing it, getting it back, a server entering lame-duck mode,
// servers discovered in the cluster. Without them nats.go says nothing, or
// writes plain text to standard error.
func busEventHandlers(logger *slog.Logger) []nats.Option {
	// The server garmd was connected to: once the connection is lost the
	// client no longer names it.
	var server atomic.Pointer[string]
	remember := func(nc *nats.Conn) {
		url := nc.ConnectedUrlRedacted()
		server.Store(&url)
	}
	return []nats.Option{
		nats.ConnectHandler(remember),
		nats.DisconnectErrHandler(func(nc *nats.Conn, err error) {
			if !lostConnection(err) {
				return
			}
			lost := nc.ConnectedUrlRedacted()
			if s := server.Load(); lost == "" && s != nil {
				lost = *s
			}
			logger.Warn("garmd: lost the bus connection; reconnecting", "server", lost, "err", err)
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			remember(nc)
			logger.Info("garmd: the bus connection is back", "server", nc.ConnectedUrlRedacted(), "reconnects", nc.Stats().Reconnects)
		}),
		nats.LameDuckModeHandler(func(nc *nats.Conn) {
			logger.Warn("garmd: the bus server is shutting down (lame-duck mode); garmd will move to another", "server", nc.ConnectedUrlRedacted())
		}),
		nats.DiscoveredServersHandler(func(nc *nats.Conn) {
			logger.Info("garmd: discovered bus servers", "servers", strings.Join(nc.DiscoveredServers(), ","))
		}),
	}
}

// lostConnection reports whether a disconnect was a loss: nats.go calls
// the disconnect handler with the error that broke the connection, and
// with nil when the connection was closed or drained on purpose — at every
// shutdown and every reload of a dev plane, which must not read as an
// outage.
func lostConnection(err error) bool { return err != nil }

// busState is the Bus source of metrics.
func busState(nc *nats.Conn) func() (bool, uint64) {
	return func() (bool, uint64) { return nc.IsConnected(), nc.Stats().Reconnects }
}

// jetStream is JetStream on garmd's connection, every publish counted.
func (d *Daemon) jetStream() (jetstream.JetStream, error) {
	js, err := jetstream.New(d.nc)
	if err != nil {
		return nil, err
	}
	return countingJetStream{JetStream: js, ops: &d.ops}, nil
}

// operationSources adds to s the sources of the series about what garmd
// depends on.
func (d *Daemon) operationSources(s *metrics.Sources, tokens *authn.Authenticator) {
	s.Operations = &d.ops
	s.Bus = busState(d.nc)
	s.Ready = func() bool { return d.ready() == nil }
	s.QuorumLost = d.quorum.lostCount
	s.SpansDropped = d.traces.dropped
	grants := d.opt.grants
	s.KeySets = func() []metrics.KeySet {
		var out []metrics.KeySet
		stats := tokens.KeySetStats()
		for _, iss := range d.cfg.Issuers {
			out = append(out, metrics.KeySet{Issuer: iss, Use: "token", Stats: stats[iss]})
		}
		if grants != nil {
			out = append(out, metrics.KeySet{Issuer: d.cfg.GrantIssuer, Use: "grant", Stats: grants.KeySetStats()})
		}
		return out
	}
}
