package jetstream_test

import (
	"strings"
	"testing"
	"time"

	replayjs "github.com/garm-dev/garm/daemon/internal/replay/jetstream"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go/jetstream"
)

func assertMentions(t *testing.T, err error, words ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("CheckBucket accepted the bucket")
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("the error does not mention %q: %v", w, err)
		}
	}
}

func TestCheckBucketRefusesAMissingBucketAndSaysHowToCreateIt(t *testing.T) {
	js := connect(t, garmtooltest.StartJetStream(t))
	_, err := replayjs.CheckBucket(bounded(t), js)
	assertMentions(t, err, wire.GrantsSpentBucket, "does not exist", "nats kv add", "--storage file", "max_grant_age_seconds")
}

func TestCheckBucketReadsTheTTLBack(t *testing.T) {
	for _, ttl := range []time.Duration{0, 2 * time.Hour, 90 * time.Second} {
		t.Run(ttl.String(), func(t *testing.T) {
			js := connect(t, garmtooltest.StartJetStream(t))
			createFencedBucket(t, js, jetstream.KeyValueConfig{Storage: jetstream.FileStorage, TTL: ttl})
			got, err := replayjs.CheckBucket(bounded(t), js)
			if err != nil {
				t.Fatalf("CheckBucket refused a file-backed bucket: %v", err)
			}
			if got != ttl {
				t.Errorf("CheckBucket read the TTL back as %v, want %v", got, ttl)
			}
		})
	}
}

func TestCheckBucketRefusesAMemoryBackedBucket(t *testing.T) {
	js := connect(t, garmtooltest.StartJetStream(t))
	createBucket(t, js, jetstream.KeyValueConfig{Storage: jetstream.MemoryStorage, TTL: time.Hour})
	_, err := replayjs.CheckBucket(bounded(t), js)
	assertMentions(t, err, wire.GrantsSpentBucket, "memory", "restarts", "--storage file")
}

func TestCheckBucketRefusesASealedBucket(t *testing.T) {
	js := connect(t, garmtooltest.StartJetStream(t))
	createBucket(t, js, jetstream.KeyValueConfig{Storage: jetstream.FileStorage})
	editStream(t, js, func(c *jetstream.StreamConfig) { c.Sealed = true })
	_, err := replayjs.CheckBucket(bounded(t), js)
	assertMentions(t, err, wire.GrantsSpentBucket, "sealed")
}

func TestCheckBucketRefusesABucketThatDiscardsOldKeysWhenFull(t *testing.T) {
	js := connect(t, garmtooltest.StartJetStream(t))
	createBucket(t, js, jetstream.KeyValueConfig{Storage: jetstream.FileStorage})
	editStream(t, js, func(c *jetstream.StreamConfig) { c.Discard, c.MaxMsgs = jetstream.DiscardOld, 1000 })
	_, err := replayjs.CheckBucket(bounded(t), js)
	assertMentions(t, err, wire.GrantsSpentBucket, "discards its oldest keys", "max_msgs 1000")
}

func TestCheckBucketAcceptsABucketThatRefusesNewKeysWhenFull(t *testing.T) {
	// Full and discarding new keys refuses every later grant: fail closed,
	// which is an outage, not a replay.
	js := connect(t, garmtooltest.StartJetStream(t))
	createFencedBucket(t, js, jetstream.KeyValueConfig{Storage: jetstream.FileStorage, MaxBytes: 1 << 20})
	if _, err := replayjs.CheckBucket(bounded(t), js); err != nil {
		t.Fatalf("CheckBucket refused a bounded bucket that discards new keys: %v", err)
	}
}

func TestCheckBucketNamesEveryProblemAtOnce(t *testing.T) {
	js := connect(t, garmtooltest.StartJetStream(t))
	createBucket(t, js, jetstream.KeyValueConfig{Storage: jetstream.MemoryStorage})
	editStream(t, js, func(c *jetstream.StreamConfig) { c.Discard, c.MaxBytes = jetstream.DiscardOld, 1<<20 })
	_, err := replayjs.CheckBucket(bounded(t), js)
	assertMentions(t, err, "memory", "discards its oldest keys")
}

func TestCheckBucketRefusesABucketThatIsNotFencedAndSaysHowToFenceIt(t *testing.T) {
	// fenceBut fences the stream but for one setting, as an operator who
	// missed one flag would.
	fenceBut := func(skip string) func(*jetstream.StreamConfig) {
		return func(c *jetstream.StreamConfig) {
			c.MaxMsgsPerSubject, c.Discard = 1, jetstream.DiscardNew
			c.DiscardNewPerSubject = skip != "per subject"
			c.DenyDelete = true // every key-value bucket's stream denies it, for good
			c.DenyPurge = skip != "purge"
			c.AllowRollup = skip == "purge" && c.AllowRollup
		}
	}
	for _, c := range []struct {
		name string
		edit func(*jetstream.StreamConfig)
		says string
	}{
		{"as nats kv add makes it", nil, "allows purging"},
		{"purges allowed", fenceBut("purge"), "allows purging"},
		{"second writes accepted", fenceBut("per subject"), "second write"},
	} {
		t.Run(c.name, func(t *testing.T) {
			js := connect(t, garmtooltest.StartJetStream(t))
			createBucket(t, js, jetstream.KeyValueConfig{Storage: jetstream.FileStorage})
			if c.edit != nil {
				editStream(t, js, c.edit)
			}
			_, err := replayjs.CheckBucket(bounded(t), js)
			assertMentions(t, err, wire.GrantsSpentBucket, "not fenced", c.says, replayjs.FenceCommand(wire.GrantsSpentBucket))
		})
	}
}

func TestAFenceCannotBeTakenDown(t *testing.T) {
	js := connect(t, garmtooltest.StartJetStream(t))
	createFencedBucket(t, js, jetstream.KeyValueConfig{Storage: jetstream.FileStorage})
	for name, unfence := range map[string]func(*jetstream.StreamConfig){
		"allow deletes": func(c *jetstream.StreamConfig) { c.DenyDelete = false },
		"allow purges":  func(c *jetstream.StreamConfig) { c.DenyPurge = false },
	} {
		s, err := js.Stream(bounded(t), "KV_"+wire.GrantsSpentBucket)
		if err != nil {
			t.Fatal(err)
		}
		cfg := s.CachedInfo().Config
		unfence(&cfg)
		if _, err := js.UpdateStream(bounded(t), cfg); err == nil {
			t.Errorf("%s: the server took the fence down", name)
		}
	}
	if _, err := replayjs.CheckBucket(bounded(t), js); err != nil {
		t.Fatalf("the fenced bucket: %v", err)
	}
}

// editStream changes the configuration of the bucket's stream, as an
// operator with the nats CLI could.
func editStream(t *testing.T, js jetstream.JetStream, edit func(*jetstream.StreamConfig)) {
	t.Helper()
	s, err := js.Stream(bounded(t), "KV_"+wire.GrantsSpentBucket)
	if err != nil {
		t.Fatal(err)
	}
	cfg := s.CachedInfo().Config
	edit(&cfg)
	if _, err := js.UpdateStream(bounded(t), cfg); err != nil {
		t.Fatal(err)
	}
}
