package streamcheck

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Replication is what garmd requires of how every stream and bucket it
// uses is replicated.
type Replication struct {
	// MinReplicas is the fewest replicas each must have (--min-replicas);
	// 1 or less requires nothing.
	MinReplicas int
	// Logger receives the warning that a stream has one replica on a
	// clustered JetStream; nil discards it.
	Logger *slog.Logger
}

// Replicated names a stream whose replication is checked.
type Replicated struct {
	// Noun names it in problems: "ledger stream", "grants bucket".
	Noun string
	// Name is the name it goes by, e.g. wire.LedgerStream or the bucket's
	// name; Stream is its stream's name when that differs (KV_<bucket>).
	Name, Stream string
	// MinDuplicates is the shortest duplicate window it may have: the time
	// its publisher may retry a publish with the same message id. Zero
	// requires nothing.
	MinDuplicates time.Duration
}

func (s Replicated) stream() string {
	if s.Stream != "" {
		return s.Stream
	}
	return s.Name
}

// CheckReplication says what keeps s from surviving the loss of a server
// or from taking a retried publish once: fewer replicas than
// r.MinReplicas, or a duplicate window shorter than s.MinDuplicates. Each
// problem names the nats command that fixes it. A stream with one replica
// on a clustered JetStream is a warning on r.Logger, not an error. A
// missing stream is not its problem: Check, or the adapter's own check,
// reports it.
func CheckReplication(ctx context.Context, js jetstream.JetStream, s Replicated, r Replication) error {
	stream, err := js.Stream(ctx, s.stream())
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s %s cannot be looked up: %w", s.Noun, s.Name, err)
	}
	info := stream.CachedInfo()
	problems := ReplicationProblems(s, info.Config, Clustered(info), r.MinReplicas)
	if warning := R1Warning(s, info.Config, Clustered(info)); warning != "" && r.Logger != nil {
		r.Logger.Warn("garmd: "+warning, "stream", s.stream(), "replicas", info.Config.Replicas)
	}
	return errors.Join(problems...)
}

// Clustered says whether the stream lives on a clustered JetStream.
func Clustered(info *jetstream.StreamInfo) bool {
	return info != nil && info.Cluster != nil && info.Cluster.Name != ""
}

// replicas is cfg's replica count, 0 read as the 1 it means.
func replicas(cfg jetstream.StreamConfig) int { return max(cfg.Replicas, 1) }

// ReplicationProblems are the problems of cfg's replication against
// minReplicas and s.MinDuplicates, each naming the command that fixes it.
func ReplicationProblems(s Replicated, cfg jetstream.StreamConfig, clustered bool, minReplicas int) []error {
	var problems []error
	if n := replicas(cfg); n < minReplicas {
		hint := ""
		if !clustered {
			hint = " (the server is not clustered: a stream has more replicas only on a cluster of at least that many servers)"
		}
		problems = append(problems, fmt.Errorf("%s %s has %d %s, fewer than --min-replicas %d%s; raise them, e.g. nats stream edit %s --replicas %d",
			s.Noun, s.Name, n, plural(n, "replica"), minReplicas, hint, s.stream(), minReplicas))
	}
	if s.MinDuplicates > 0 && cfg.Duplicates < s.MinDuplicates {
		problems = append(problems, fmt.Errorf("%s %s forgets a message id after %s (its duplicate window), less than the %s garmd may retry a publish for, so a retried publish could be stored twice; widen it, e.g. nats stream edit %s --dupe-window %s",
			s.Noun, s.Name, shortDuration(cfg.Duplicates), shortDuration(s.MinDuplicates), s.stream(), shortDuration(s.MinDuplicates)))
	}
	return problems
}

// R1Warning is the warning for a stream with one replica on a clustered
// JetStream, or "".
func R1Warning(s Replicated, cfg jetstream.StreamConfig, clustered bool) string {
	if !clustered || replicas(cfg) > 1 {
		return ""
	}
	return fmt.Sprintf("%s %s has one replica on a clustered JetStream: losing the server that holds it stops it; replicate it, e.g. nats stream edit %s --replicas 3",
		s.Noun, s.Name, s.stream())
}

func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}

// shortDuration writes d without the zero units time.Duration.String ends
// with ("2m", not "2m0s"), in a form both Go and the nats CLI parse.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
