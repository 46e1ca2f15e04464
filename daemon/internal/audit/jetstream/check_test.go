package jetstream_test

import (
	"context"
	"strings"
	"testing"
	"time"

	auditjs "github.com/garm-dev/garm/daemon/internal/audit/jetstream"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go/jetstream"
)

const month = 30 * 24 * time.Hour

// checkWith creates cfg (when given), runs CheckStream with asserted and
// deletes the stream again, so one server serves every case.
func checkWith(t *testing.T, cfg *jetstream.StreamConfig, asserted time.Duration) error {
	t.Helper()
	// Each check gets a server of its own: a stream deleted and created again
	// at once under the same name can fail to get its store back.
	js := connect(t, garmtooltest.StartJetStream(t))
	ctx, cancel := context.WithTimeout(t.Context(), waitBound)
	defer cancel()
	if cfg != nil {
		if _, err := js.CreateStream(ctx, *cfg); err != nil {
			t.Fatal(err)
		}
	}
	return auditjs.CheckStream(ctx, js, asserted)
}

func assertMentions(t *testing.T, err error, words ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("CheckStream accepted the stream")
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("the error does not mention %q: %v", w, err)
		}
	}
}

func with(change func(*jetstream.StreamConfig)) *jetstream.StreamConfig {
	cfg := auditStream()
	change(&cfg)
	return &cfg
}

func TestCheckStreamAcceptsAStreamThatHoldsEveryRowForTheAssertedRetention(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cfg      *jetstream.StreamConfig
		asserted time.Duration
	}{
		{"indefinite asserted, indefinite kept", with(func(*jetstream.StreamConfig) {}), 0},
		{"a month asserted, indefinite kept", with(func(*jetstream.StreamConfig) {}), month},
		{"a month asserted, a month kept", with(func(c *jetstream.StreamConfig) { c.MaxAge = month }), month},
		{"a month asserted, a year kept", with(func(c *jetstream.StreamConfig) { c.MaxAge = 12 * month }), month},
		{"wider subjects", with(func(c *jetstream.StreamConfig) { c.Subjects = []string{"other.>", "garm.v1.>"} }), 0},
		{"exact subjects", with(func(c *jetstream.StreamConfig) { c.Subjects = []string{"garm.v1.audit.*.*"} }), 0},
		{"size limits refusing new rows", with(func(c *jetstream.StreamConfig) { c.MaxBytes, c.MaxMsgs = 1<<30, 1<<20 }), 0},
		{"per-subject limit refusing new rows", with(func(c *jetstream.StreamConfig) { c.MaxMsgsPerSubject, c.DiscardNewPerSubject = 1000, true }), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := checkWith(t, tc.cfg, tc.asserted); err != nil {
				t.Errorf("CheckStream refused: %v", err)
			}
		})
	}
}

func TestCheckStreamRefusesAMissingStreamAndSaysHowToCreateIt(t *testing.T) {
	assertMentions(t, checkWith(t, nil, 0),
		wire.AuditStream, "does not exist", "nats stream add "+wire.AuditStream, "--subjects '"+wire.AuditStreamSubjects+"'",
		"--storage file", "--discard new", "--max-age 0s", "indefinitely")
	assertMentions(t, checkWith(t, nil, month), "--max-age 720h ", "at least 720h")
}

func TestCheckStreamRefusesAMemoryStream(t *testing.T) {
	err := checkWith(t, with(func(c *jetstream.StreamConfig) { c.Storage = jetstream.MemoryStorage }), 0)
	assertMentions(t, err, wire.AuditStream, "Memory storage", "--storage file")
}

func TestCheckStreamRefusesAStreamThatDropsOldRowsWhenFull(t *testing.T) {
	err := checkWith(t, with(func(c *jetstream.StreamConfig) { c.Discard = jetstream.DiscardOld }), 0)
	assertMentions(t, err, wire.AuditStream, "DiscardOld", "--discard new")
}

func TestCheckStreamRefusesAStreamThatDropsOldRowsOfASubject(t *testing.T) {
	err := checkWith(t, with(func(c *jetstream.StreamConfig) { c.MaxMsgsPerSubject = 1000 }), 0)
	assertMentions(t, err, wire.AuditStream, "1000 messages per subject", "discard_new_per_subject")
}

func TestCheckStreamRefusesAStreamThatRemovesConsumedRows(t *testing.T) {
	err := checkWith(t, with(func(c *jetstream.StreamConfig) { c.Retention = jetstream.InterestPolicy }), 0)
	assertMentions(t, err, wire.AuditStream, "Interest retention", "limits")
}

func TestCheckStreamRefusesAStreamWhoseSubjectsMissSomeAuditSubjects(t *testing.T) {
	for _, subjects := range [][]string{
		{"other.>"},
		{"garm.v1.audit.acme.>"},
		{"garm.v1.audit.*"},
		{"garm.v1.audit.*.garmd"},
		{"garm.v1.audit.*.*.>"},
	} {
		t.Run(strings.Join(subjects, ","), func(t *testing.T) {
			err := checkWith(t, with(func(c *jetstream.StreamConfig) { c.Subjects = subjects }), 0)
			assertMentions(t, err, wire.AuditStream, subjects[0], "do not cover", wire.AuditStreamSubjects)
		})
	}
}

func TestCheckStreamRefusesAMaxAgeShorterThanTheAssertedRetention(t *testing.T) {
	err := checkWith(t, with(func(c *jetstream.StreamConfig) { c.MaxAge = 24 * time.Hour }), month)
	assertMentions(t, err, wire.AuditStream, "keeps messages for 24h", "is 720h", "--max-age 720h")
}

func TestCheckStreamRefusesAnyMaxAgeWhenTheAssertedRetentionIsIndefinite(t *testing.T) {
	err := checkWith(t, with(func(c *jetstream.StreamConfig) { c.MaxAge = 12 * month }), 0)
	assertMentions(t, err, wire.AuditStream, "keeps messages for 8640h", "indefinitely", "--max-age 0s")
}

func TestCheckStreamRefusesANegativeAssertion(t *testing.T) {
	assertMentions(t, checkWith(t, with(func(*jetstream.StreamConfig) {}), -time.Hour), "--audit-stream-retention", "-1h")
}

func TestCheckStreamRefusesAStreamThatDoesNotAcknowledge(t *testing.T) {
	err := checkWith(t, with(func(c *jetstream.StreamConfig) { c.NoAck = true }), 0)
	assertMentions(t, err, wire.AuditStream, "no_ack")
}

func TestCheckStreamRefusesASealedStream(t *testing.T) {
	js := connect(t, garmtooltest.StartJetStream(t))
	ctx, cancel := context.WithTimeout(t.Context(), waitBound)
	defer cancel()
	cfg := auditStream()
	createStream(t, js, cfg)
	cfg.Sealed = true
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	assertMentions(t, auditjs.CheckStream(ctx, js, 0), wire.AuditStream, "sealed")
}

func TestCheckStreamNamesEveryProblemAtOnce(t *testing.T) {
	err := checkWith(t, &jetstream.StreamConfig{
		Name:     wire.AuditStream,
		Subjects: []string{"garm.v1.audit.acme.>"},
		Storage:  jetstream.MemoryStorage,
		Discard:  jetstream.DiscardOld,
		MaxAge:   time.Hour,
	}, month)
	assertMentions(t, err, "do not cover", "Memory storage", "DiscardOld", "keeps messages for 1h")
}
