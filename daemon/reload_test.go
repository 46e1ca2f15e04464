package garmd

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/catalogue-builder/builder"
	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/catalogue/source"
)

// Catalogues the reloader is fed, built once per test binary: the fixture,
// the fixture with one more tool, and the fixture with a MODE_GRANT tool,
// which does not mount while grants are off.
var (
	smallCatalogue  = sync.OnceValues(func() ([]byte, error) { return buildFrom("testdata/records/proto", "../examples/calculator/proto") })
	biggerCatalogue = sync.OnceValues(func() ([]byte, error) {
		return buildFrom("testdata/records/proto", "../examples/calculator/proto", "testdata/reload/proto")
	})
	ungrantCatalogue = sync.OnceValues(func() ([]byte, error) {
		return buildFrom("testdata/records/proto", "../examples/calculator/proto", "testdata/approvals/proto")
	})
	errStoreIsStopped = errors.New("connection refused")
)

func buildFrom(roots ...string) ([]byte, error) {
	c, err := builder.FromRoots(context.Background(), roots...)
	if err != nil {
		return nil, err
	}
	return c.Bytes, nil
}

func mustBytes(t *testing.T, f func() ([]byte, error)) []byte {
	t.Helper()
	data, err := f()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// fakeStore is a source whose object a test replaces, counting what the
// reloader asks of it.
type fakeStore struct {
	mu          sync.Mutex
	data        []byte
	etag        string
	down        bool
	tooLarge    bool
	heads, gets int
	// headed, when set, is sent to (without blocking) on every Head: a
	// test waits on it for a poll to begin.
	headed chan struct{}
}

func (f *fakeStore) put(data []byte, etag string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.data, f.etag = data, etag
}

func (f *fakeStore) setDown(down bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.down = down
}

func (f *fakeStore) counts() (heads, gets int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.heads, f.gets
}

func (f *fakeStore) String() string { return "s3://test/catalogue" }

func (f *fakeStore) Head(context.Context) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.heads++
	if f.headed != nil {
		select {
		case f.headed <- struct{}{}:
		default:
		}
	}
	if f.down {
		return "", errStoreIsStopped
	}
	return f.etag, nil
}

func (f *fakeStore) Fetch(context.Context) ([]byte, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gets++
	switch {
	case f.down:
		return nil, "", errStoreIsStopped
	case f.tooLarge:
		return nil, "", &source.TooLargeError{Location: f.String(), Size: artifact.MaxSize + 1, Limit: artifact.MaxSize}
	}
	return f.data, f.etag, nil
}

var _ source.Source = (*fakeStore)(nil)

// clock is a test's time, moved by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

// reloadRig is a reloader serving the small catalogue from a fake store,
// with a hand-moved clock and its log in a buffer.
type reloadRig struct {
	r     *reloader
	store *fakeStore
	clock *clock
	log   *bytes.Buffer
	swaps []*catalogue.Generation
}

func newReloadRig(t *testing.T) *reloadRig {
	t.Helper()
	data := mustBytes(t, smallCatalogue)
	gen, err := catalogue.Load(data, catalogue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := catalogue.Mount(gen, catalogue.Steps{}); err != nil {
		t.Fatal(err)
	}
	serving := new(catalogue.Serving)
	serving.Store(gen)
	rig := &reloadRig{store: &fakeStore{data: data, etag: "e1"}, clock: &clock{t: time.Unix(1_700_000_000, 0)}, log: &bytes.Buffer{}}
	logger := slog.New(slog.NewTextHandler(rig.log, nil))
	rig.r = newReloader(rig.store, serving, "e1", catalogue.Options{}, catalogue.Steps{}, time.Second, logger)
	rig.r.now = rig.clock.now
	rig.r.onSwap = []func(*catalogue.Generation){func(g *catalogue.Generation) { rig.swaps = append(rig.swaps, g) }}
	return rig
}

func (rig *reloadRig) poll() {
	rig.r.poll(context.Background())
	rig.clock.advance(rig.r.every)
}

func (rig *reloadRig) lines(msg string) int { return strings.Count(rig.log.String(), msg) }

func TestAnUnchangedETagFetchesNothing(t *testing.T) {
	t.Parallel()
	rig := newReloadRig(t)
	for range 5 {
		rig.poll()
	}
	if heads, gets := rig.store.counts(); heads != 5 || gets != 0 {
		t.Errorf("%d HEADs and %d GETs, want 5 and 0", heads, gets)
	}
}

func TestTheDigestDecidesWhenTheETagChangesAndTheBytesDoNot(t *testing.T) {
	t.Parallel()
	rig := newReloadRig(t)
	before := rig.r.serving.Load()
	rig.store.put(mustBytes(t, smallCatalogue), "e2")
	for range 3 {
		rig.poll()
	}
	if _, gets := rig.store.counts(); gets != 1 {
		t.Errorf("%d GETs, want the one that read the new ETag's bytes", gets)
	}
	if rig.r.serving.Load() != before || len(rig.swaps) != 0 || rig.lines("reloaded") != 0 {
		t.Errorf("the same bytes under a new ETag swapped a generation in:\n%s", rig.log)
	}
}

func TestANewCatalogueIsMountedAndSwappedIn(t *testing.T) {
	t.Parallel()
	rig := newReloadRig(t)
	old := rig.r.serving.Load()
	rig.store.put(mustBytes(t, biggerCatalogue), "e2")
	rig.poll()
	now := rig.r.serving.Load()
	if now == old || len(now.Tools) != len(old.Tools)+1 || now.Route("/more.v1.Greeter/Greet") == nil {
		t.Fatalf("serving %d tools (was %d)", len(now.Tools), len(old.Tools))
	}
	if len(rig.swaps) != 1 || rig.swaps[0] != now {
		t.Errorf("onSwap saw %d generations", len(rig.swaps))
	}
	if rig.lines("garmd: catalogue reloaded") != 1 || !strings.Contains(rig.log.String(), "old_digest="+old.Digest) ||
		!strings.Contains(rig.log.String(), "new_digest="+now.Digest) {
		t.Errorf("log:\n%s", rig.log)
	}
	// Mount compiled the validator before the swap: the generation is whole.
	if now.Validator() == nil {
		t.Error("the swapped-in generation has no validator")
	}
}

func TestARefusedCatalogueKeepsTheServingOneAndIsStatedOnceAnHour(t *testing.T) {
	t.Parallel()
	for name, data := range map[string]func() ([]byte, error){
		"does not mount": ungrantCatalogue,
		"does not load":  func() ([]byte, error) { return []byte("not a catalogue"), nil },
	} {
		t.Run(name, func(t *testing.T) {
			rig := newReloadRig(t)
			old := rig.r.serving.Load()
			rig.store.put(mustBytes(t, data), "bad")
			for range 10 {
				rig.poll()
			}
			if rig.r.serving.Load() != old || len(rig.swaps) != 0 {
				t.Fatal("a refused catalogue was swapped in")
			}
			if _, gets := rig.store.counts(); gets != 1 {
				t.Errorf("%d GETs of one refused ETag, want 1", gets)
			}
			if n := rig.lines("garmd: catalogue refused"); n != 1 {
				t.Errorf("the refusal was logged %d times over 10 polls, want once:\n%s", n, rig.log)
			}
			if !strings.Contains(rig.log.String(), "serving_digest="+old.Digest) ||
				!strings.Contains(rig.log.String(), "refused_digest="+artifact.Digest(mustBytes(t, data))) {
				t.Errorf("the refusal does not name both digests:\n%s", rig.log)
			}
			rig.clock.advance(restateEvery)
			rig.poll()
			if n := rig.lines("garmd: catalogue refused"); n != 2 {
				t.Errorf("after an hour the refusal was logged %d times in all, want 2", n)
			}
			// The same refused bytes under another ETag are not fetched
			// into a second statement.
			rig.store.put(mustBytes(t, data), "bad-again")
			rig.poll()
			if n := rig.lines("garmd: catalogue refused"); n != 2 {
				t.Errorf("the same refused digest was stated again within the hour (%d in all)", n)
			}
			// A good catalogue after a refused one is swapped in.
			rig.store.put(mustBytes(t, biggerCatalogue), "good")
			rig.poll()
			if len(rig.swaps) != 1 {
				t.Error("a good catalogue after a refused one was not swapped in")
			}
		})
	}
}

func TestAnArtifactOverTheCeilingIsARefusal(t *testing.T) {
	t.Parallel()
	rig := newReloadRig(t)
	rig.store.put(nil, "huge")
	rig.store.tooLarge = true
	for range 3 {
		rig.poll()
	}
	if _, gets := rig.store.counts(); gets != 1 || rig.lines("garmd: catalogue refused") != 1 || !strings.Contains(rig.log.String(), "ceiling") {
		t.Errorf("%d GETs; log:\n%s", gets, rig.log)
	}
}

func TestAStoreThatCannotBeReachedIsAWarningAtMostOncePerPoll(t *testing.T) {
	t.Parallel()
	rig := newReloadRig(t)
	old := rig.r.serving.Load()
	rig.store.setDown(true)
	for range 3 {
		rig.r.poll(context.Background())
		rig.clock.advance(rig.r.every / 4) // four polls (hints) per interval
	}
	if n := rig.lines("cannot be reached"); n != 1 {
		t.Errorf("%d warnings within one interval, want 1:\n%s", n, rig.log)
	}
	rig.clock.advance(rig.r.every)
	rig.poll()
	if n := rig.lines("cannot be reached"); n != 2 {
		t.Errorf("%d warnings after another interval, want 2", n)
	}
	if rig.r.serving.Load() != old || rig.lines("level=WARN") != 2 {
		t.Errorf("an unreachable store withdrew the catalogue or was not a warning:\n%s", rig.log)
	}
	rig.store.setDown(false)
	rig.store.put(mustBytes(t, biggerCatalogue), "e2")
	rig.poll()
	if len(rig.swaps) != 1 {
		t.Error("no reload once the store came back")
	}
}

func TestHintsCoalesceAndPollWithoutWaitingForTheInterval(t *testing.T) {
	t.Parallel()
	rig := newReloadRig(t)
	rig.r.every = time.Hour
	rig.r.now = time.Now
	for range 100 {
		rig.r.hint() // a burst never blocks the bus's callback
	}
	rig.store.put(mustBytes(t, biggerCatalogue), "e2")
	headed := make(chan struct{}, 1)
	rig.store.headed = headed
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		rig.r.run(ctx)
	}()
	// The ticker is an hour away, so only a pending hint could start a
	// poll. The one poll the burst starts takes its hint first: once it
	// has begun, no hint may be left pending, or the burst would poll
	// again hintGap later.
	select {
	case <-headed:
	case <-time.After(10 * time.Second):
		t.Fatal("a hint did not start a poll")
	}
	if pending := len(rig.r.hints); pending != 0 {
		t.Errorf("%d hints still pending after the burst's poll began: the burst would poll again", pending)
	}
	cancel()
	<-done
	if heads, _ := rig.store.counts(); heads != 1 {
		t.Errorf("a burst of 100 hints made %d polls, want 1", heads)
	}
}
