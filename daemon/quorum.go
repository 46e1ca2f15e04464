package garmd

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/garm-dev/garm/daemon/internal/catalogue"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go/jetstream"
)

// How garmd watches the streams its tools need.
const (
	// quorumPoll is how often every needed stream is asked for its leader.
	quorumPoll = 2 * time.Second
	// quorumAsk bounds one question: a stream that has lost quorum does
	// not answer, and the watch must not lag behind by much.
	quorumAsk = time.Second
)

// quorumWatch asks, every quorumPoll, whether each stream a mounted tool
// needs has a leader, and keeps the answer for /readyz. It is the only
// writer of lost; the probe only reads it, so a probe never waits on
// JetStream.
type quorumWatch struct {
	// lost names the streams without a leader at the last poll, "" when
	// none.
	lost atomic.Pointer[string]
}

// lostCount is how many streams had no leader at the last poll, for
// garm_jetstream_quorum_lost.
func (q *quorumWatch) lostCount() int {
	lost := q.lost.Load()
	if lost == nil || *lost == "" {
		return 0
	}
	return strings.Count(*lost, ", ") + 1
}

// degraded is admin.Config.Degraded: what JetStream cannot do for the
// tools now, or "".
func (d *Daemon) degraded() string {
	if lost := d.quorum.lost.Load(); lost != nil && *lost != "" {
		return "JetStream has no quorum for " + *lost + "; the tools that need it refuse or fall back, the others serve"
	}
	return ""
}

// neededStreams are the streams the serving generation's tools need, by
// what needs them: the ledger (every tool), the audit stream (LEVEL_AUDIT
// tools), notify (MODE_NOTIFY tools) and the spent-grant bucket's stream
// (MODE_GRANT tools). Only what the configuration turns on is counted.
func (d *Daemon) neededStreams(gen *catalogue.Generation) []string {
	var needed []string
	if d.cfg.LedgerStream {
		needed = append(needed, wire.LedgerStream)
	}
	for _, t := range gen.Tools {
		if d.cfg.AuditStreamRetention != nil && t.Policy.GetAudit().GetLevel() == toolv1.ToolPolicy_Audit_LEVEL_AUDIT {
			needed = append(needed, wire.AuditStream)
		}
		switch t.Policy.GetApproval().GetMode() {
		case toolv1.ToolPolicy_Approval_MODE_GRANT:
			if d.cfg.Grants() {
				needed = append(needed, "KV_"+wire.GrantsSpentBucket)
			}
		case toolv1.ToolPolicy_Approval_MODE_NOTIFY:
			if d.cfg.Notify {
				needed = append(needed, wire.NotifyStream)
			}
		}
	}
	slices.Sort(needed)
	return slices.Compact(needed)
}

// pollQuorum asks every needed stream for its leader once.
func (d *Daemon) pollQuorum(ctx context.Context, js jetstream.JetStream) {
	var lost []string
	if gen := d.serving.Load(); gen != nil && d.nc.IsConnected() {
		for _, name := range d.neededStreams(gen) {
			askCtx, cancel := context.WithTimeout(ctx, quorumAsk)
			stream, err := js.Stream(askCtx, name)
			cancel()
			if ctx.Err() != nil {
				return
			}
			if err != nil || leaderless(stream.CachedInfo()) {
				lost = append(lost, name)
			}
		}
	}
	joined := strings.Join(lost, ", ")
	if prev := d.quorum.lost.Swap(&joined); prev == nil || *prev != joined {
		if joined != "" {
			d.logger.Warn("garmd: JetStream has no quorum for streams mounted tools need", "streams", joined)
		} else if prev != nil {
			d.logger.Info("garmd: JetStream has quorum again for every stream mounted tools need")
		}
	}
}

// leaderless says whether a clustered stream answered without a leader.
func leaderless(info *jetstream.StreamInfo) bool {
	c := info.Cluster
	return c != nil && c.Name != "" && c.Leader == ""
}

// runQuorumWatch starts the watch and returns what stops it and waits
// until it has stopped.
func (d *Daemon) runQuorumWatch(ctx context.Context) (stop func()) {
	js, err := jetstream.New(d.nc)
	if err != nil {
		d.logger.Error("garmd: the JetStream quorum cannot be watched; /readyz will not say degraded", "err", fmt.Sprint(err))
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		ticker := time.NewTicker(quorumPoll)
		defer ticker.Stop()
		for {
			d.pollQuorum(ctx, js)
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}
