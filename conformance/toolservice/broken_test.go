package toolservice_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/garm-dev/garm/conformance/toolservice"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/nats-io/nats.go"
)

// TestEachBrokenServiceFailsExactlyTheCasesOfItsPromise holds the kit to
// judging: a service that breaks one promise fails the cases of that
// promise and no other. Lifecycle cases need a started process and are
// skipped here; the Go runtime's run covers them.
func TestEachBrokenServiceFailsExactlyTheCasesOfItsPromise(t *testing.T) {
	t.Parallel()
	cases, err := toolservice.Shipped()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		brk  string
		fail []string
	}{
		{"", nil},
		{"accepts-missing-invocation", []string{"invocation.absent.refused", "invocation.absent.handler-not-called"}},
		{"lenient-base64", []string{"invocation.unpadded.refused", "invocation.urlsafe.refused", "invocation.stray_bits.refused"}},
		{"runs-late-requests", []string{"deadline.passed.refused-429", "deadline.passed.handler-not-called", "deadline.passed.beats-bad-body"}},
		// An unbounded sleep also holds up the next call to the same tool.
		{"unbounded-handler", []string{"deadline.bounds-handler.sleep-cut-short", "deadline.bounds-handler.until-deadline",
			"deadline.bounds-handler.short-sleep-finishes", "deadline.handler-sees-deadline"}},
		// protobuf reads a known field of the wrong wire type as an unknown one.
		{"accepts-unknown-body-fields", []string{"body.unknown-field.refused-400", "body.wrong-wire-type.refused-400"}},
		{"passes-unknown-codes", []string{"refusal.unknown-code.teapot.is-500", "refusal.unknown-code.unauthorised.is-500",
			"refusal.unknown-code.unavailable.is-500", "refusal.unknown-code.long.is-500",
			"refusal.unknown-code.empty-message.is-500"}},
		{"empty-refusal-message", []string{"refusal.400.empty-message-is-code", "refusal.404.empty-message-is-code", "refusal.422.empty-message-is-code"}},
		{"keeps-line-breaks", []string{"error.message.one-line", "refusal.message.one-line"}},
		{"nothing-is-empty-answer", []string{"answer.nothing.is-500", "answer.nothing.has-message"}},
		{"no-identity", []string{"discovery.info.identity"}},
		{"own-queue-group", []string{"discovery.info.endpoints", "queue-group.shared"}},
		{"one-tool-at-a-time", []string{"concurrency.per-tool"}},
	}
	for _, tt := range tests {
		// One at a time: the cases time calls, and thirteen services at
		// once on two cores would be judged by the machine's load.
		t.Run("break="+tt.brk, func(t *testing.T) {
			srv := garmtooltest.StartServer(t)
			nc, err := nats.Connect(srv.URL())
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			serveFixture(t, nc, tt.brk)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			results, err := toolservice.Run(ctx, toolservice.Config{Conn: nc}, cases)
			if err != nil {
				t.Fatal(err)
			}
			var failed []string
			for _, r := range results {
				if !r.Passed && !r.Skipped {
					failed = append(failed, r.Case.Name)
				}
			}
			slices.Sort(failed)
			want := slices.Clone(tt.fail)
			slices.Sort(want)
			if !slices.Equal(failed, want) {
				for _, r := range results {
					if !r.Passed && !r.Skipped {
						t.Logf("FAIL %s: %s", r.Case.Name, r.Reason)
					}
				}
				t.Fatalf("failed %v, want exactly %v", failed, want)
			}
		})
	}
}
