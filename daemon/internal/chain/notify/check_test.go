package notify_test

import (
	"context"
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/chain/notify"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go/jetstream"
)

// checkWith creates cfg (when given), runs CheckStream and deletes the
// stream again, so one server serves every case.
func checkWith(t *testing.T, cfg *jetstream.StreamConfig) error {
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
	return notify.CheckStream(ctx, js)
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

func TestCheckStreamAcceptsAStreamWhoseSubjectsCoverEveryNotifySubject(t *testing.T) {
	for _, subjects := range [][]string{
		{wire.NotifyStreamSubjects},
		{"garm.v1.notify.*.>"},
		{"garm.>"},
		{"other.>", "garm.v1.>"},
	} {
		t.Run(strings.Join(subjects, ","), func(t *testing.T) {
			err := checkWith(t, &jetstream.StreamConfig{Name: wire.NotifyStream, Subjects: subjects, Storage: jetstream.MemoryStorage})
			if err != nil {
				t.Errorf("CheckStream refused the subjects %v: %v", subjects, err)
			}
		})
	}
}

func TestCheckStreamRefusesAMissingStreamAndSaysHowToCreateIt(t *testing.T) {
	assertMentions(t, checkWith(t, nil), wire.NotifyStream, "does not exist", "nats stream add "+wire.NotifyStream, wire.NotifyStreamSubjects)
}

func TestCheckStreamRefusesAStreamWhoseSubjectsMissSomeNotifySubjects(t *testing.T) {
	for _, subjects := range [][]string{
		{"other.>"},
		{"garm.v1.notify.acme.>"},
		{"garm.v1.notify.*.*.*.*"}, // only FQNs of three parts
		{"garm.v1.notify.*.payments.>"},
	} {
		t.Run(strings.Join(subjects, ","), func(t *testing.T) {
			err := checkWith(t, &jetstream.StreamConfig{Name: wire.NotifyStream, Subjects: subjects})
			assertMentions(t, err, wire.NotifyStream, subjects[0], "do not cover", wire.NotifyStreamSubjects)
		})
	}
}

func TestCheckStreamRefusesAStreamThatDoesNotAcknowledge(t *testing.T) {
	err := checkWith(t, &jetstream.StreamConfig{Name: wire.NotifyStream, Subjects: []string{wire.NotifyStreamSubjects}, NoAck: true})
	assertMentions(t, err, wire.NotifyStream, "no_ack")
}

func TestCheckStreamRefusesASealedStream(t *testing.T) {
	js := connect(t, garmtooltest.StartJetStream(t))
	ctx, cancel := context.WithTimeout(t.Context(), waitBound)
	defer cancel()
	cfg := jetstream.StreamConfig{Name: wire.NotifyStream, Subjects: []string{wire.NotifyStreamSubjects}}
	if _, err := js.CreateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	cfg.Sealed = true
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	assertMentions(t, notify.CheckStream(ctx, js), wire.NotifyStream, "sealed")
}

func TestCheckStreamNamesEveryProblemAtOnce(t *testing.T) {
	err := checkWith(t, &jetstream.StreamConfig{Name: wire.NotifyStream, Subjects: []string{"other.>"}, NoAck: true})
	assertMentions(t, err, "do not cover", "no_ack")
}
