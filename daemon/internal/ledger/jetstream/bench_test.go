package jetstream_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	ledgerjs "github.com/garm-dev/garm/daemon/internal/ledger/jetstream"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go/jetstream"
)

// BenchmarkRecord measures Record alone, on each of its paths. Record
// encodes the row into its batch itself (decision 0065), so its figures
// include the encoding.
//
//   - accepted: the row goes into the buffer (the publisher is held on an
//     acknowledgement that never comes, so it takes nothing from Record's
//     CPU and the buffer holds every row);
//   - accepted_parallel: the same from GOMAXPROCS goroutines;
//   - publishing: a healthy in-memory stream and the default options, so
//     whatever the publisher cannot keep up with falls back; fellback/op
//     says how much did;
//   - fallback: the Recorder is closed and every row is a JSON log line.
func BenchmarkRecord(b *testing.B) {
	s := garmtooltest.StartJetStream(b)
	nc, js := connect(b, s)
	e := row("acme", 0)
	discard := slog.New(slog.DiscardHandler)
	jsonDiscard := slog.New(slog.NewJSONHandler(io.Discard, nil))

	b.Run("accepted", func(b *testing.B) {
		stallPublishes(b, nc)
		r := stalledRecorder(b, js, discard)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			r.Record(e)
		}
		b.StopTimer()
		closeNow(r)
	})

	b.Run("accepted_parallel", func(b *testing.B) {
		stallPublishes(b, nc)
		r := stalledRecorder(b, js, discard)
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				r.Record(e)
			}
		})
		b.StopTimer()
		closeNow(r)
	})

	b.Run("publishing", func(b *testing.B) {
		ctx, cancel := context.WithTimeout(context.Background(), waitBound)
		defer cancel()
		if _, err := js.CreateStream(ctx, jetstream.StreamConfig{
			Name:     wire.LedgerStream,
			Subjects: []string{wire.LedgerStreamSubjects},
			Storage:  jetstream.MemoryStorage,
			MaxBytes: 64 << 20,
			Discard:  jetstream.DiscardOld,
		}); err != nil {
			b.Fatal(err)
		}
		defer func() { _ = js.DeleteStream(context.Background(), wire.LedgerStream) }()
		r, err := ledgerjs.New(js, ledgerjs.Options{Logger: jsonDiscard})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			r.Record(e)
		}
		b.StopTimer()
		_ = r.Close(ctx)
		b.ReportMetric(float64(r.Counts().FellBack.Load())/float64(b.N), "fellback/op")
	})

	b.Run("fallback", func(b *testing.B) {
		r, err := ledgerjs.New(js, ledgerjs.Options{Logger: jsonDiscard})
		if err != nil {
			b.Fatal(err)
		}
		closeNow(r)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			r.Record(e)
		}
	})
}

// stalledRecorder is a Recorder whose buffer holds b.N rows and whose
// publisher waits on a publish nobody acknowledges.
func stalledRecorder(b *testing.B, js jetstream.JetStream, logger *slog.Logger) *ledgerjs.Recorder {
	b.Helper()
	r, err := ledgerjs.New(js, ledgerjs.Options{Logger: logger, BufferRows: b.N + 1, MaxBatchRows: 1, PublishTimeout: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	return r
}

// closeNow closes r with an ended context: every buffered row falls back.
func closeNow(r *ledgerjs.Recorder) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = r.Close(ctx)
}
