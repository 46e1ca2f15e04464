package streamcheck_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	auditjs "github.com/garm-dev/garm/daemon/internal/audit/jetstream"
	"github.com/garm-dev/garm/daemon/internal/chain/notify"
	ledgerjs "github.com/garm-dev/garm/daemon/internal/ledger/jetstream"
	replayjs "github.com/garm-dev/garm/daemon/internal/replay/jetstream"
	"github.com/garm-dev/garm/daemon/internal/streamcheck"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go/jetstream"
)

// bound bounds every step of these tests.
const bound = 30 * time.Second

func TestReplicationProblemsNameTheCommandThatFixesThem(t *testing.T) {
	ledger := streamcheck.Replicated{Noun: "ledger stream", Name: "GARM_LEDGER", MinDuplicates: time.Minute}
	bucket := streamcheck.Replicated{Noun: "grants bucket", Name: "GARM_GRANTS_SPENT", Stream: "KV_GARM_GRANTS_SPENT"}
	for _, c := range []struct {
		name        string
		s           streamcheck.Replicated
		cfg         jetstream.StreamConfig
		clustered   bool
		minReplicas int
		want        []string
		warning     string
	}{
		{"R3 with a 2m window on a cluster", ledger, jetstream.StreamConfig{Replicas: 3, Duplicates: 2 * time.Minute}, true, 3, nil, ""},
		{"R1 alone, nothing required", ledger, jetstream.StreamConfig{Replicas: 1, Duplicates: time.Minute}, false, 1, nil, ""},
		{"replicas 0 reads as 1", ledger, jetstream.StreamConfig{Duplicates: time.Minute}, false, 1, nil, ""},
		{"R1 on a cluster is a warning, not a problem", ledger, jetstream.StreamConfig{Replicas: 1, Duplicates: time.Minute}, true, 1, nil,
			"nats stream edit GARM_LEDGER --replicas 3"},
		{"too few replicas", ledger, jetstream.StreamConfig{Replicas: 1, Duplicates: time.Minute}, true, 3,
			[]string{"ledger stream GARM_LEDGER has 1 replica, fewer than --min-replicas 3; raise them, e.g. nats stream edit GARM_LEDGER --replicas 3"},
			"nats stream edit GARM_LEDGER --replicas 3"},
		{"too few replicas on a single server says so", ledger, jetstream.StreamConfig{Replicas: 1, Duplicates: time.Minute}, false, 3,
			[]string{"the server is not clustered"}, ""},
		{"a short duplicate window", ledger, jetstream.StreamConfig{Replicas: 3, Duplicates: 30 * time.Second}, true, 3,
			[]string{"ledger stream GARM_LEDGER forgets a message id after 30s (its duplicate window), less than the 1m garmd may retry a publish for, so a retried publish could be stored twice; widen it, e.g. nats stream edit GARM_LEDGER --dupe-window 1m"}, ""},
		{"the bucket is edited through its stream", bucket, jetstream.StreamConfig{Replicas: 2}, true, 3,
			[]string{"grants bucket GARM_GRANTS_SPENT has 2 replicas, fewer than --min-replicas 3; raise them, e.g. nats stream edit KV_GARM_GRANTS_SPENT --replicas 3"}, ""},
		{"a bucket has no window to check", bucket, jetstream.StreamConfig{Replicas: 3}, true, 3, nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := streamcheck.ReplicationProblems(c.s, c.cfg, c.clustered, c.minReplicas)
			if len(got) != len(c.want) {
				t.Fatalf("problems %v, want %d: %q", got, len(c.want), c.want)
			}
			for i := range got {
				if !strings.Contains(got[i].Error(), c.want[i]) {
					t.Errorf("problem %q, want it to say %q", got[i], c.want[i])
				}
			}
			warning := streamcheck.R1Warning(c.s, c.cfg, c.clustered)
			if (warning == "") != (c.warning == "") || !strings.Contains(warning, c.warning) {
				t.Errorf("warning %q, want %q", warning, c.warning)
			}
		})
	}
}

// create makes each stream of cfgs, and the grants bucket with kv.
func create(t *testing.T, js jetstream.JetStream, kv *jetstream.KeyValueConfig, cfgs ...jetstream.StreamConfig) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), bound)
	defer cancel()
	for _, cfg := range cfgs {
		if _, err := js.CreateStream(ctx, cfg); err != nil {
			t.Fatalf("creating %s: %v", cfg.Name, err)
		}
	}
	if kv != nil {
		if _, err := js.CreateKeyValue(ctx, *kv); err != nil {
			t.Fatalf("creating %s: %v", kv.Bucket, err)
		}
	}
}

// checkAll runs every adapter's replication check, as garmd does at start.
func checkAll(t *testing.T, js jetstream.JetStream, r streamcheck.Replication) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), bound)
	defer cancel()
	return errors.Join(
		ledgerjs.CheckReplication(ctx, js, r),
		auditjs.CheckReplication(ctx, js, r),
		notify.CheckReplication(ctx, js, r),
		replayjs.CheckReplication(ctx, js, r),
	)
}

func streams(replicas int, duplicates time.Duration) []jetstream.StreamConfig {
	return []jetstream.StreamConfig{
		{Name: wire.LedgerStream, Subjects: []string{wire.LedgerStreamSubjects}, Storage: jetstream.FileStorage, Replicas: replicas, Duplicates: duplicates},
		{Name: wire.AuditStream, Subjects: []string{wire.AuditStreamSubjects}, Storage: jetstream.FileStorage, Discard: jetstream.DiscardNew, Replicas: replicas, Duplicates: duplicates},
		{Name: wire.NotifyStream, Subjects: []string{wire.NotifyStreamSubjects}, Storage: jetstream.FileStorage, Replicas: replicas, Duplicates: duplicates},
	}
}

func TestOnOneServerTooFewReplicasAndAShortDuplicateWindowAreRefusedWithTheirFixes(t *testing.T) {
	srv := garmtooltest.StartJetStream(t)
	_, js := garmtooltest.ConnectJetStream(t, srv.URL())
	create(t, js, &jetstream.KeyValueConfig{Bucket: wire.GrantsSpentBucket, Storage: jetstream.FileStorage}, streams(1, 30*time.Second)...)

	var log bytes.Buffer
	r := streamcheck.Replication{MinReplicas: 1, Logger: slog.New(slog.NewJSONHandler(&log, nil))}
	err := checkAll(t, js, r)
	for _, want := range []string{
		"nats stream edit GARM_LEDGER --dupe-window 1m",
		"nats stream edit GARM_AUDIT --dupe-window 1m",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("the checks did not say %q: %v", want, err)
		}
	}
	if strings.Contains(err.Error(), wire.NotifyStream) {
		t.Errorf("the notify stream's window was checked: %v", err)
	}
	if log.Len() != 0 {
		t.Errorf("a single server warned about R1:\n%s", log.String())
	}

	r.MinReplicas = 3
	err = checkAll(t, js, r)
	for _, want := range []string{
		"nats stream edit GARM_LEDGER --replicas 3",
		"nats stream edit GARM_AUDIT --replicas 3",
		"nats stream edit GARM_NOTIFY --replicas 3",
		"nats stream edit KV_GARM_GRANTS_SPENT --replicas 3",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("with --min-replicas 3 the checks did not say %q: %v", want, err)
		}
	}
}

func TestOnAClusterR3PassesAndR1IsAWarning(t *testing.T) {
	cluster := garmtooltest.StartCluster(t, "garm", 3)
	_, js := garmtooltest.ConnectJetStream(t, cluster.URLs())

	create(t, js, &jetstream.KeyValueConfig{Bucket: wire.GrantsSpentBucket, Storage: jetstream.FileStorage, Replicas: 3}, streams(3, 2*time.Minute)...)
	var log bytes.Buffer
	r := streamcheck.Replication{MinReplicas: 3, Logger: slog.New(slog.NewJSONHandler(&log, nil))}
	if err := checkAll(t, js, r); err != nil {
		t.Fatalf("R3 streams and bucket were refused: %v", err)
	}
	if log.Len() != 0 {
		t.Fatalf("R3 streams warned:\n%s", log.String())
	}

	ctx, cancel := context.WithTimeout(t.Context(), bound)
	defer cancel()
	for _, name := range []string{wire.LedgerStream, wire.AuditStream, wire.NotifyStream, "KV_" + wire.GrantsSpentBucket} {
		if err := js.DeleteStream(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	create(t, js, &jetstream.KeyValueConfig{Bucket: wire.GrantsSpentBucket, Storage: jetstream.FileStorage}, streams(1, 2*time.Minute)...)
	r.MinReplicas = 1
	if err := checkAll(t, js, r); err != nil {
		t.Fatalf("R1 with --min-replicas 1 was refused: %v", err)
	}
	for _, want := range []string{
		`"level":"WARN"`,
		"nats stream edit GARM_LEDGER --replicas 3",
		"nats stream edit GARM_AUDIT --replicas 3",
		"nats stream edit GARM_NOTIFY --replicas 3",
		"nats stream edit KV_GARM_GRANTS_SPENT --replicas 3",
	} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the warnings do not say %q:\n%s", want, log.String())
		}
	}
}
