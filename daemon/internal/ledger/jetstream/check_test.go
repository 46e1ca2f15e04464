package jetstream_test

import (
	"context"
	"strings"
	"testing"

	ledgerjs "github.com/garm-dev/garm/daemon/internal/ledger/jetstream"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go/jetstream"
)

func checkWith(t *testing.T, cfg *jetstream.StreamConfig) error {
	t.Helper()
	// Each check gets a server of its own: a stream deleted and created again
	// at once under the same name can fail to get its store back.
	_, js := connect(t, garmtooltest.StartJetStream(t))
	ctx, cancel := context.WithTimeout(t.Context(), waitBound)
	defer cancel()
	if cfg != nil {
		if _, err := js.CreateStream(ctx, *cfg); err != nil {
			t.Fatal(err)
		}
	}
	return ledgerjs.CheckStream(ctx, js)
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

func TestCheckStreamAcceptsAStreamWhoseSubjectsCoverEveryLedgerSubject(t *testing.T) {
	for _, subjects := range [][]string{
		{wire.LedgerStreamSubjects},
		{"garm.v1.ledger.*.*"},
		{"garm.>"},
		{"garm.*.ledger.>"},
		{"other.>", "garm.v1.>"},
	} {
		t.Run(strings.Join(subjects, ","), func(t *testing.T) {
			err := checkWith(t, &jetstream.StreamConfig{Name: wire.LedgerStream, Subjects: subjects})
			if err != nil {
				t.Errorf("CheckStream refused the subjects %v: %v", subjects, err)
			}
		})
	}
}

func TestCheckStreamRefusesAMissingStreamAndSaysHowToCreateIt(t *testing.T) {
	err := checkWith(t, nil)
	assertMentions(t, err, wire.LedgerStream, "does not exist", wire.LedgerStreamSubjects, "nats stream add")
}

func TestCheckStreamRefusesAStreamWhoseSubjectsMissSomeLedgerSubjects(t *testing.T) {
	for _, subjects := range [][]string{
		{"other.>"},
		{"garm.v1.ledger.acme.>"},
		{"garm.v1.ledger.*"},
		{"garm.v1.ledger.*.garmd"},
		{"garm.v1.ledger.*.*.>"},
	} {
		t.Run(strings.Join(subjects, ","), func(t *testing.T) {
			err := checkWith(t, &jetstream.StreamConfig{Name: wire.LedgerStream, Subjects: subjects})
			assertMentions(t, err, wire.LedgerStream, subjects[0], "do not cover", wire.LedgerStreamSubjects)
		})
	}
}

func TestCheckStreamRefusesAStreamThatDoesNotAcknowledge(t *testing.T) {
	err := checkWith(t, &jetstream.StreamConfig{Name: wire.LedgerStream, Subjects: []string{wire.LedgerStreamSubjects}, NoAck: true})
	assertMentions(t, err, wire.LedgerStream, "no_ack")
}

func TestCheckStreamRefusesASealedStream(t *testing.T) {
	_, js := connect(t, garmtooltest.StartJetStream(t))
	ctx, cancel := context.WithTimeout(t.Context(), waitBound)
	defer cancel()
	cfg := jetstream.StreamConfig{Name: wire.LedgerStream, Subjects: []string{wire.LedgerStreamSubjects}}
	if _, err := js.CreateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	cfg.Sealed = true
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	assertMentions(t, ledgerjs.CheckStream(ctx, js), wire.LedgerStream, "sealed")
}
