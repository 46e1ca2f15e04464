package lake

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/garm-dev/garm/devkit/s3test"
	"github.com/garm-dev/garm/ledger/ledgertest"
	"github.com/garm-dev/garm/ledger/rows"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/nats-io/nats.go/jetstream"
)

// fixture is a bus holding rows and an empty lake in a real S3-compatible
// store.
type fixture struct {
	bus    *ledgertest.Bus
	js     jetstream.JetStream
	bucket *Bucket
	srv    *s3test.Server
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	srv := garmtooltest.StartJetStream(t)
	_, js := garmtooltest.ConnectJetStream(t, srv.URL())
	s3 := s3test.Start(t)
	s3.CreateBucket(t, "lake")
	return &fixture{bus: ledgertest.CreateStreams(t, js), js: js, srv: s3,
		bucket: &Bucket{Client: s3.Client(t), Name: "lake", Prefix: "ledger/"}}
}

// scanAll reads the lake and checks the rows are rows from..from+n-1 in
// order, each once.
func scanAll(t *testing.T, store Store, n int) {
	t.Helper()
	var got int
	err := Scan(context.Background(), store, func(r rows.Row) error {
		if want := fmt.Sprintf("ev-%07d", got); r.EventID != want || r.N != uint64(got) {
			return fmt.Errorf("row %d is %s (n %d), want %s", got, r.EventID, r.N, want)
		}
		got++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got != n {
		t.Fatalf("the lake holds %d rows, the stream %d", got, n)
	}
}

// exportUntil runs Export until the lake holds the stream's last message.
func exportUntil(t *testing.T, f *fixture, o Options, last uint64) (Stats, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	type result struct {
		st  Stats
		err error
	}
	done := make(chan result, 1)
	go func() {
		st, err := Export(ctx, f.js, f.bucket, o)
		done <- result{st, err}
	}()
	deadline := time.After(ledgertest.Bound)
	for {
		select {
		case r := <-done:
			cancel()
			return r.st, r.err
		case <-deadline:
			cancel()
			t.Fatalf("the lake did not reach stream message %d within %v", last, ledgertest.Bound)
		case <-time.After(50 * time.Millisecond):
		}
		rs, err := loadRanges(context.Background(), f.bucket, false)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(rs.firsts); n > 0 && rs.byFirst[rs.firsts[n-1]].Last == last {
			info, err := f.js.Consumer(context.Background(), "GARM_LEDGER", o.Durable)
			if err == nil && info.CachedInfo().AckFloor.Stream == last {
				cancel()
				r := <-done
				if !errors.Is(r.err, context.Canceled) {
					t.Fatalf("Export: %v", r.err)
				}
				return r.st, nil
			}
		}
	}
}

func TestTheExporterStoresEveryRowOnceRollingByRowsAndByTime(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.bus.Publish(t, 0, 2345, 50) // 47 messages
	st, err := exportUntil(t, f, Options{RollRows: 1000, RollEvery: 300 * time.Millisecond, Durable: "lake"}, 47)
	if err != nil {
		t.Fatal(err)
	}
	// 1000 rows is 20 messages: two full ranges, then the tail by time.
	if st.Rows != 2345 || st.Ranges != 3 {
		t.Fatalf("stats %+v", st)
	}
	keys, _ := f.bucket.List(context.Background(), "")
	want := []string{
		"_garm/ranges/00000000000000000001-00000000000000000020.json", "_garm/ranges/00000000000000000021-00000000000000000040.json",
		"_garm/ranges/00000000000000000041-00000000000000000047.json",
		"date=2025-12-06/app=garmd/00000000000000000001-00000000000000000020.parquet",
		"date=2025-12-06/app=garmd/00000000000000000021-00000000000000000040.parquet",
		"date=2025-12-06/app=garmd/00000000000000000041-00000000000000000047.parquet",
	}
	if strings.Join(keys, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the lake holds\n%s\nwant\n%s", strings.Join(keys, "\n"), strings.Join(want, "\n"))
	}
	scanAll(t, f.bucket, 2345)

	// More rows later: the durable consumer resumes after the last range.
	f.bus.Publish(t, 2345, 500, 50)
	if st, err = exportUntil(t, f, Options{RollRows: 1000, RollEvery: 300 * time.Millisecond, Durable: "lake"}, 57); err != nil || st.Rows != 500 {
		t.Fatalf("second run: %+v %v", st, err)
	}
	scanAll(t, f.bucket, 2845)
}

func TestARangeBegunBeforeACrashIsRewrittenWithTheSameNamesAndBytes(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.bus.Publish(t, 0, 1000, 50) // 20 messages
	crash := errors.New("the exporter died before acknowledging")
	o := Options{RollRows: 300, RollEvery: time.Hour, Durable: "lake"}
	o.beforeAck = func(Manifest) error { return crash }
	if _, err := Export(context.Background(), f.js, f.bucket, o); !errors.Is(err, crash) {
		t.Fatalf("Export: %v", err)
	}
	// 300 rows is 6 messages.
	key := "date=2025-12-06/app=garmd/00000000000000000001-00000000000000000006.parquet"
	before, ok, err := f.bucket.Get(context.Background(), key)
	if err != nil || !ok {
		t.Fatalf("the first range was not stored: %v", err)
	}
	// Restarted with other limits, it must still end the range it began
	// where its plan says, or its objects would overlap the first ones.
	st, err := exportUntil(t, f, Options{RollRows: 400, RollEvery: 300 * time.Millisecond, Durable: "lake", Logger: slog.Default()}, 20)
	if err != nil {
		t.Fatal(err)
	}
	after, _, _ := f.bucket.Get(context.Background(), key)
	if !bytes.Equal(before, after) {
		t.Fatal("the range was rewritten with other bytes")
	}
	if st.Rows != 1000 {
		t.Fatalf("stats %+v", st)
	}
	scanAll(t, f.bucket, 1000)
}

func TestAOneShotExportIsRepeatableAndRefusesToOverlapAnotherRange(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.bus.Publish(t, 0, 1000, 50)
	ctx := context.Background()
	st, err := ExportRange(ctx, f.js, f.bucket, Range{From: 1, To: 12}, Options{RollRows: 250})
	if err != nil || st.Rows != 600 || st.Ranges != 3 || st.Last != 12 {
		t.Fatalf("ExportRange: %+v %v", st, err)
	}
	key := "date=2025-12-06/app=garmd/00000000000000000006-00000000000000000010.parquet"
	first, _, _ := f.bucket.Get(ctx, key)
	if st, err := ExportRange(ctx, f.js, f.bucket, Range{From: 1, To: 12}, Options{RollRows: 250}); err != nil || st.Rows != 600 {
		t.Fatalf("the same export again: %+v %v", st, err)
	}
	if again, _, _ := f.bucket.Get(ctx, key); !bytes.Equal(first, again) {
		t.Fatal("the same export wrote other bytes")
	}
	if _, err := ExportRange(ctx, f.js, f.bucket, Range{From: 8}, Options{RollRows: 250}); err == nil || !strings.Contains(err.Error(), "double rows") {
		t.Fatalf("an overlapping export: %v", err)
	}
	if st, err := ExportRange(ctx, f.js, f.bucket, Range{From: 13}, Options{}); err != nil || st.Rows != 400 {
		t.Fatalf("the rest: %+v %v", st, err)
	}
	scanAll(t, f.bucket, 1000)
}

func TestAOneShotExportByTimeTakesTheMessagesStoredInThatTime(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.bus.Publish(t, 0, 500, 50)
	time.Sleep(20 * time.Millisecond)
	since := time.Now()
	f.bus.Publish(t, 500, 300, 50)
	time.Sleep(20 * time.Millisecond)
	until := time.Now()
	f.bus.Publish(t, 800, 200, 50)
	st, err := ExportRange(context.Background(), f.js, f.bucket, Range{Since: since, Until: until}, Options{})
	if err != nil || st.Rows != 300 || st.Last != 16 {
		t.Fatalf("ExportRange: %+v %v", st, err)
	}
	keys, _ := f.bucket.List(context.Background(), "date=")
	if len(keys) != 1 || !strings.HasSuffix(keys[0], "/00000000000000000011-00000000000000000016.parquet") {
		t.Fatalf("the lake holds %v", keys)
	}
}
