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

func checkWith(t *testing.T, js jetstream.JetStream, cfg *jetstream.StreamConfig) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitBound)
	defer cancel()
	if cfg != nil {
		if _, err := js.CreateStream(ctx, *cfg); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := js.DeleteStream(ctx, cfg.Name); err != nil {
				t.Fatal(err)
			}
		}()
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
	s := garmtooltest.StartJetStream(t)
	_, js := connect(t, s)
	for _, subjects := range [][]string{
		{wire.LedgerStreamSubjects},
		{"garm.v1.ledger.*.*"},
		{"garm.>"},
		{"garm.*.ledger.>"},
		{"other.>", "garm.v1.>"},
	} {
		t.Run(strings.Join(subjects, ","), func(t *testing.T) {
			err := checkWith(t, js, &jetstream.StreamConfig{Name: wire.LedgerStream, Subjects: subjects})
			if err != nil {
				t.Errorf("CheckStream refused the subjects %v: %v", subjects, err)
			}
		})
	}
}

func TestCheckStreamRefusesAMissingStreamAndSaysHowToCreateIt(t *testing.T) {
	s := garmtooltest.StartJetStream(t)
	_, js := connect(t, s)
	err := checkWith(t, js, nil)
	assertMentions(t, err, wire.LedgerStream, "does not exist", wire.LedgerStreamSubjects, "nats stream add")
}

func TestCheckStreamRefusesAStreamWhoseSubjectsMissSomeLedgerSubjects(t *testing.T) {
	s := garmtooltest.StartJetStream(t)
	_, js := connect(t, s)
	for _, subjects := range [][]string{
		{"other.>"},
		{"garm.v1.ledger.acme.>"},
		{"garm.v1.ledger.*"},
		{"garm.v1.ledger.*.garmd"},
		{"garm.v1.ledger.*.*.>"},
	} {
		t.Run(strings.Join(subjects, ","), func(t *testing.T) {
			err := checkWith(t, js, &jetstream.StreamConfig{Name: wire.LedgerStream, Subjects: subjects})
			assertMentions(t, err, wire.LedgerStream, subjects[0], "do not cover", wire.LedgerStreamSubjects)
		})
	}
}

func TestCheckStreamRefusesAStreamThatDoesNotAcknowledge(t *testing.T) {
	s := garmtooltest.StartJetStream(t)
	_, js := connect(t, s)
	err := checkWith(t, js, &jetstream.StreamConfig{Name: wire.LedgerStream, Subjects: []string{wire.LedgerStreamSubjects}, NoAck: true})
	assertMentions(t, err, wire.LedgerStream, "no_ack")
}

func TestCheckStreamRefusesASealedStream(t *testing.T) {
	s := garmtooltest.StartJetStream(t)
	_, js := connect(t, s)
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
