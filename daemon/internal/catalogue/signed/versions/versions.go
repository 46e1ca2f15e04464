package versions

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/garm-dev/garm/internal/fencedkv"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go/jetstream"
)

// Bucket is the key-value bucket this package keeps.
const Bucket = wire.CatalogueVersionsBucket

// kvStream is the stream behind the bucket.
const kvStream = "KV_" + Bucket

// maxAttempts bounds one Advance's compare-and-set rounds: each lost round
// means another replica wrote in between, and the next read sees it.
const maxAttempts = 8

// maxValueSize bounds one record: a name, a digest and a few key ids.
const maxValueSize = 16 << 10

// Record is the highest version one catalogue name has served.
type Record struct {
	Name    string    `json:"name"`
	Version uint64    `json:"version"`
	Digest  string    `json:"digest"`
	Signers []string  `json:"signers,omitempty"`
	At      time.Time `json:"at"`
	// RolledBackFrom is the version an explicit rollback lowered the
	// record from; 0 when this write was no rollback.
	RolledBackFrom uint64 `json:"rolled_back_from,omitempty"`
	// RolledBackTo is the version the last explicit rollback went back
	// to, carried by every later write: that rollback is made once, however
	// often a flag naming it is given again.
	RolledBackTo uint64 `json:"rolled_back_to,omitempty"`
}

// Key is the bucket key of a catalogue name: a digest of the name, so any
// name is a valid key and no name can reach another's key.
func Key(name string) string {
	sum := sha256.Sum256([]byte(name))
	return "catalogue." + hex.EncodeToString(sum[:])
}

// Store is the bucket, checked fenced.
type Store struct {
	kv     jetstream.KeyValue
	stream jetstream.Stream
	now    func() time.Time
}

// Ensure creates the bucket when it is missing, with the given number of
// replicas, fences it and opens it: for `garm bus init`, the dev plane and
// tests. garmd only opens (Open).
func Ensure(ctx context.Context, js jetstream.JetStream, replicas int) (*Store, error) {
	if _, err := bucket.Ensure(ctx, js, BucketConfig(max(replicas, 1))); err != nil {
		return nil, err
	}
	return Open(ctx, js)
}

// BucketConfig is what Ensure creates the bucket with before fencing it:
// file storage, the last record of each key.
func BucketConfig(replicas int) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{
		Bucket:       Bucket,
		Description:  "garm: the highest signed catalogue version each catalogue name has served",
		History:      1,
		Storage:      jetstream.FileStorage,
		Replicas:     replicas,
		MaxValueSize: maxValueSize,
	}
}

// Fence makes the bucket's stream refuse purges, roll-ups and deletes of a
// record: a key-value bucket allows all three by default, and any of them
// would forget the highest version and let an older catalogue be served
// again. Fence is what an operator does with FenceCommand; garmd only
// checks (Open).
func Fence(ctx context.Context, js jetstream.JetStream) error {
	return bucket.ApplyFence(ctx, js)
}

// bucket describes the bucket for fencedkv.
var bucket = fencedkv.Bucket{
	Name:          Bucket,
	Called:        "catalogue versions bucket",
	Loss:          "an older catalogue could be served again",
	Create:        "create it with garm bus init, or: " + CreateCommand() + ", then " + FenceCommand(),
	FenceCommand:  FenceCommand(),
	Fence:         fenced,
	FenceProblems: fenceProblems,
}

// fenced sets cfg's fence.
func fenced(cfg *jetstream.StreamConfig) {
	cfg.AllowRollup = false
	cfg.DenyPurge = true
	cfg.DenyDelete = true
}

// FenceCommand is the nats CLI command that fences the bucket's stream.
func FenceCommand() string {
	return "nats stream edit " + kvStream + " --no-allow-rollup --deny-purge --deny-delete"
}

// CreateCommand is the nats CLI command that creates the bucket, before
// FenceCommand.
func CreateCommand() string { return "nats kv add " + Bucket + " --storage file --history 1" }

// Open binds the existing bucket and checks it: a key-value bucket,
// file-backed, not sealed, never discarding a record to make room, and
// fenced. The error names every problem and the command that fixes it;
// Open creates and changes nothing.
func Open(ctx context.Context, js jetstream.JetStream) (*Store, error) {
	kv, _, err := bucket.Check(ctx, js)
	if err != nil {
		return nil, err
	}
	stream, err := js.Stream(ctx, kvStream)
	if err != nil {
		return nil, fmt.Errorf("catalogue versions bucket %s: %w", Bucket, err)
	}
	return &Store{kv: kv, stream: stream, now: time.Now}, nil
}

// fenceProblems are what keeps cfg from being what Fence makes it.
func fenceProblems(cfg jetstream.StreamConfig) []string {
	var missing []string
	if cfg.AllowRollup {
		missing = append(missing, "allows roll-ups")
	}
	if !cfg.DenyPurge {
		missing = append(missing, "allows purging")
	}
	if !cfg.DenyDelete {
		missing = append(missing, "allows deleting records")
	}
	return missing
}

// ErrForgotten is a record whose last write is a delete or purge marker:
// the bucket held a highest version and something removed it. garmd does
// not read that as "nothing served yet".
var ErrForgotten = errors.New("the record of the highest version served was deleted; put back a record of the version last served (nats kv put " + Bucket + " <key> with its name, version and digest) before garmd serves this catalogue again")

// Highest is the record of name, and the revision it was read at; found is
// false when the name has never been recorded. It reads the key's last
// message from the stream rather than through the bucket, which answers
// "not found" both for a key never written and for one whose last write is
// a delete or purge marker, and whose history would need a consumer.
func (s *Store) Highest(ctx context.Context, name string) (rec Record, revision uint64, found bool, err error) {
	msg, err := s.stream.GetLastMsgForSubject(ctx, subject(name))
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
		return Record{}, 0, false, nil
	case err != nil:
		return Record{}, 0, false, fmt.Errorf("reading %s from %s: %w", name, Bucket, err)
	}
	if op := msg.Header.Get("KV-Operation"); op != "" {
		return Record{}, 0, false, fmt.Errorf("%s in %s (%s): %w", name, Bucket, op, ErrForgotten)
	}
	if err := json.Unmarshal(msg.Data, &rec); err != nil {
		return Record{}, 0, false, fmt.Errorf("%s in %s holds no version record: %w", Key(name), Bucket, err)
	}
	if rec.Name != name {
		return Record{}, 0, false, fmt.Errorf("%s in %s names catalogue %q, not %q", Key(name), Bucket, rec.Name, name)
	}
	return rec, msg.Sequence, true, nil
}

// subject is the stream subject of name's key.
func subject(name string) string { return "$KV." + Bucket + "." + Key(name) }

// Decide judges a candidate against the record read: it returns the record
// to write, or an error that says why the candidate may not be served.
// write is false when the record already says what the candidate would.
type Decide func(current Record, found bool) (next Record, write bool, err error)

// Advance reads name's record, asks decide, and writes what it answers by
// compare-and-set on the revision read: a write that another replica's
// write overtook is not applied, and the whole round runs again on what
// that replica wrote, so two replicas racing cannot lower the record. It
// returns the record that stands.
func (s *Store) Advance(ctx context.Context, name string, decide Decide) (Record, error) {
	for range maxAttempts {
		current, revision, found, err := s.Highest(ctx, name)
		if err != nil {
			return Record{}, err
		}
		next, write, err := decide(current, found)
		if err != nil || !write {
			return current, err
		}
		next.Name = name
		if next.At.IsZero() {
			next.At = s.now().UTC()
		}
		value, err := json.Marshal(next)
		if err != nil {
			return Record{}, err
		}
		if found {
			_, err = s.kv.Update(ctx, Key(name), value, revision)
		} else {
			_, err = s.kv.Create(ctx, Key(name), value)
		}
		if err == nil {
			return next, nil
		}
		if !lostRace(err) {
			return Record{}, fmt.Errorf("writing %s's version to %s: %w", name, Bucket, err)
		}
	}
	return Record{}, fmt.Errorf("writing %s's version to %s: other writers overtook %d attempts", name, Bucket, maxAttempts)
}

// lostRace is a compare-and-set that another write overtook.
func lostRace(err error) bool {
	if errors.Is(err, jetstream.ErrKeyExists) {
		return true
	}
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) &&
		(apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}
