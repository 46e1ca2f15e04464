package pending

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/garm-dev/garm/internal/fencedkv"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// maxValueSize bounds one record: a request carries a tool's texts and its
// material, never a payload.
const maxValueSize = 256 << 10

// Store is the bucket of approval requests and decisions.
type Store struct {
	kv  jetstream.KeyValue
	js  jetstream.JetStream
	now func() time.Time
	// reads counts the records read, so a test can pin what a view costs.
	reads atomic.Uint64
}

// Ensure creates the bucket when it is missing, with the given number of
// replicas, fences it ([Fence]) and returns a Store
// on it: for tests and the dev plane. A deployment creates the bucket once
// and garmd and the approvals service bind it with Open.
func Ensure(ctx context.Context, js jetstream.JetStream, replicas int) (*Store, error) {
	if _, err := bucket.Ensure(ctx, js, BucketConfig(max(replicas, 1))); err != nil {
		return nil, fmt.Errorf("pending: %w", err)
	}
	return Open(ctx, js)
}

// BucketConfig is the configuration Ensure creates the bucket with before
// fencing it: file storage, one value per key.
func BucketConfig(replicas int) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{
		Bucket:       Bucket,
		Description:  "garm approval requests (req., ask., caller., inbox.) and decisions (dec.)",
		History:      1,
		Storage:      jetstream.FileStorage,
		Replicas:     replicas,
		MaxValueSize: maxValueSize,
	}
}

// Fence makes the bucket's stream take per-key TTLs and refuse purges and
// roll-ups: a key-value bucket allows both by default, so one publish with
// a roll-up header on any key an identity may write would empty the bucket
// of every request, decision and count. The server's TTL markers need
// roll-ups, so the bucket keeps none: an expired key simply goes. Fence is what an operator does with
// [FenceCommand]; garmd and the approvals service only check (Open).
func Fence(ctx context.Context, js jetstream.JetStream) error {
	if err := bucket.ApplyFence(ctx, js); err != nil {
		return fmt.Errorf("pending: %w", err)
	}
	return nil
}

// bucket describes the bucket for fencedkv.
var bucket = fencedkv.Bucket{
	Name:          Bucket,
	Called:        "approvals bucket",
	Loss:          "every request and decision could be lost",
	Create:        "create it file-backed, without --marker-ttl, and fence it: nats kv add " + Bucket + " --storage file --history 1, then " + FenceCommand(),
	FenceCommand:  FenceCommand(),
	Fence:         fenced,
	FenceProblems: fenceProblems,
}

// fenced sets cfg's fence.
func fenced(cfg *jetstream.StreamConfig) {
	cfg.AllowMsgTTL = true
	cfg.SubjectDeleteMarkerTTL = 0
	cfg.AllowRollup = false
	cfg.DenyPurge = true
	cfg.DenyDelete = true
}

// kvStream is the stream behind the bucket.
const kvStream = "KV_" + Bucket

// FenceCommand is the nats CLI command that fences the bucket's stream.
func FenceCommand() string {
	return "nats stream edit " + kvStream + " --allow-msg-ttl --no-allow-rollup --deny-purge --deny-delete"
}

// Open binds the existing bucket and checks what this package relies on: it
// is a key-value bucket, file-backed, takes per-key TTLs, takes new keys,
// never discards old ones to make room, and is fenced: no purge, no roll-up,
// no message delete. The error names every problem and the command that
// fixes it; Open creates and changes nothing.
func Open(ctx context.Context, js jetstream.JetStream) (*Store, error) {
	kv, _, err := bucket.Check(ctx, js)
	if err != nil {
		return nil, err
	}
	return &Store{kv: kv, js: js, now: time.Now}, nil
}

// fenceProblems are what keeps cfg from being what Fence makes it.
func fenceProblems(cfg jetstream.StreamConfig) []string {
	var missing []string
	if !cfg.AllowMsgTTL {
		missing = append(missing, "takes no per-key TTLs (no request could expire with its grant age)")
	}
	if cfg.AllowRollup {
		missing = append(missing, "allows roll-ups")
	}
	if cfg.SubjectDeleteMarkerTTL > 0 {
		missing = append(missing, "keeps TTL markers, which need roll-ups (recreate it without --marker-ttl)")
	}
	if !cfg.DenyPurge {
		missing = append(missing, "allows purging")
	}
	if !cfg.DenyDelete {
		missing = append(missing, "allows deleting records")
	}
	return missing
}

// Ask records r as a request waiting for a decision and returns it as
// recorded. When the same caller (tenant, subject, act chain) already has an
// open request for the same tool and material digest, undecided and
// unexpired, Ask returns that one instead and writes nothing.
//
// Ask fills ID, Created (when zero), Expires and MaterialDigest (when
// empty); a digest that is not the digest of r.Material is refused.
func (s *Store) Ask(ctx context.Context, r Request) (Request, error) {
	r = r.normalised()
	if r.MaterialDigest == "" {
		r.MaterialDigest = wire.MaterialDigest(r.Material)
	}
	if err := r.check(); err != nil {
		return Request{}, err
	}
	if r.Created.IsZero() {
		r.Created = s.now().UTC()
	}
	r.Expires = r.Created.Add(time.Duration(r.MaxGrantAgeSeconds) * time.Second)
	askKey := askKey(r)
	prior, err := s.kv.Get(ctx, askKey)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		prior = nil
	case err != nil:
		return Request{}, fmt.Errorf("pending: reading %s: %w", askKey, err)
	}
	if prior != nil {
		if open, ok := s.reusable(ctx, string(prior.Value()), r); ok {
			return open, nil
		}
	}
	id, err := NewID()
	if err != nil {
		return Request{}, fmt.Errorf("pending: a request id: %w", err)
	}
	r.ID = id
	body, err := json.Marshal(r)
	if err != nil {
		return Request{}, fmt.Errorf("pending: encoding request: %w", err)
	}
	life := r.Expires.Sub(r.Created)
	if err := s.countCaller(ctx, r, life); err != nil {
		return Request{}, err
	}
	// The inbox key goes first: one naming a request that is then not
	// written is skipped by the inbox, a request without one would be
	// invisible to every approver.
	if _, err := s.kv.Create(ctx, inboxKey(r), []byte(id), jetstream.KeyTTL(ttl(life))); err != nil {
		return Request{}, fmt.Errorf("pending: indexing request: %w", err)
	}
	if _, err := s.kv.Create(ctx, requestKey(id), body, jetstream.KeyTTL(ttl(life+ExpiredKept))); err != nil {
		return Request{}, fmt.Errorf("pending: creating request: %w", err)
	}
	if err := s.pointAsk(ctx, askKey, prior, id, life); err != nil {
		// Another garmd recorded the same ask first: use its request and
		// withdraw ours, so an approver sees one.
		if again, gerr := s.kv.Get(ctx, askKey); gerr == nil {
			if open, ok := s.reusable(ctx, string(again.Value()), r); ok {
				// Its inbox key expires with it; meanwhile the inbox
				// skips it, as it names no request.
				_ = s.kv.Delete(ctx, requestKey(id))
				return open, nil
			}
		}
		// The request stands without its reuse key: the next ask makes a
		// new one, which costs a duplicate, never a wrong answer.
	}
	return r, nil
}

// countCaller counts r as one of its caller's requests, for life, and
// refuses it with ErrTooMany when the caller already has
// MaxRequestsPerCaller. The count is the number of the caller's keys the
// stream holds (the fenced bucket keeps no marker of an expired key), read
// before r's key is written: callers asking at the
// same instant on several replicas can pass it together, so the bound holds
// to within the number of replicas' concurrent asks.
func (s *Store) countCaller(ctx context.Context, r Request, life time.Duration) error {
	filter, key := callerKeys(r)
	stream, err := s.js.Stream(ctx, kvStream)
	if err != nil {
		return fmt.Errorf("pending: counting the caller's requests: %w", err)
	}
	info, err := stream.Info(ctx, jetstream.WithSubjectFilter("$KV."+Bucket+"."+filter))
	if err != nil {
		return fmt.Errorf("pending: counting the caller's requests: %w", err)
	}
	if len(info.State.Subjects) >= MaxRequestsPerCaller {
		return fmt.Errorf("%w (%d, the most a caller has at once)", ErrTooMany, len(info.State.Subjects))
	}
	if _, err := s.kv.Create(ctx, key, []byte(r.ID), jetstream.KeyTTL(ttl(life))); err != nil {
		return fmt.Errorf("pending: counting the caller's request: %w", err)
	}
	return nil
}

// reusable reads the request id and reports whether it is the open request
// of the same caller for the same tool and material as r.
func (s *Store) reusable(ctx context.Context, id string, r Request) (Request, bool) {
	open, dec, err := s.Get(ctx, id)
	if err != nil || dec != nil || !s.now().Before(open.Expires) {
		return Request{}, false
	}
	if open.Tenant != r.Tenant || open.Subject != r.Subject || !slices.Equal(open.Act, r.Act) ||
		open.Tool != r.Tool || open.MaterialDigest != r.MaterialDigest {
		return Request{}, false
	}
	return open, true
}

// askTaken is what the reuse key holds once Recall handed its approved
// request's grant to a plain retry: no id, so the next ask opens a new
// request.
const askTaken = "taken"

// Recall is the same caller's unexpired request for the same tool and
// material as r, and its decision (nil while undecided): what a plain retry
// of a call finds, without presenting the request's id. ErrNotFound when
// there is none. An approved request is handed out once: Recall swaps its
// reuse key for a marker, so only one retry collects it and the next call
// opens a new request; a denied one stays, and answers every retry until
// it expires with its grant age.
func (s *Store) Recall(ctx context.Context, r Request) (Request, *Decision, error) {
	r = r.normalised()
	if r.MaterialDigest == "" {
		r.MaterialDigest = wire.MaterialDigest(r.Material)
	}
	key := askKey(r)
	e, err := s.kv.Get(ctx, key)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return Request{}, nil, ErrNotFound
	case err != nil:
		return Request{}, nil, fmt.Errorf("pending: reading %s: %w", key, err)
	}
	id := string(e.Value())
	if !ValidID(id) {
		return Request{}, nil, ErrNotFound
	}
	found, dec, err := s.Get(ctx, id)
	switch {
	case errors.Is(err, ErrNotFound):
		return Request{}, nil, ErrNotFound
	case err != nil:
		return Request{}, nil, err
	}
	if found.Tenant != r.Tenant || found.Subject != r.Subject || !slices.Equal(found.Act, r.Act) ||
		found.Tool != r.Tool || found.MaterialDigest != r.MaterialDigest {
		return Request{}, nil, ErrNotFound
	}
	if dec != nil && dec.Verdict == Approved {
		msg := &nats.Msg{Subject: "$KV." + Bucket + "." + key, Data: []byte(askTaken)}
		_, err := s.js.PublishMsg(ctx, msg,
			jetstream.WithExpectLastSequencePerSubject(e.Revision()), jetstream.WithMsgTTL(ttl(found.Expires.Sub(s.now()))))
		var apiErr *jetstream.APIError
		switch {
		case errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence:
			return Request{}, nil, ErrNotFound // another retry collected it
		case err != nil:
			return Request{}, nil, fmt.Errorf("pending: taking %s: %w", key, err)
		}
	}
	return found, dec, nil
}

// Collected marks r's approval collected by its id: when r's reuse key still names r, it is
// swapped for the marker Recall leaves, so the next identical call asks anew rather than
// recalling a spent grant. A key that names another request, or is gone, is left as it is.
func (s *Store) Collected(ctx context.Context, r Request) error {
	key := askKey(r)
	e, err := s.kv.Get(ctx, key)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("pending: reading %s: %w", key, err)
	}
	if string(e.Value()) != r.ID {
		return nil
	}
	msg := &nats.Msg{Subject: "$KV." + Bucket + "." + key, Data: []byte(askTaken)}
	_, err = s.js.PublishMsg(ctx, msg,
		jetstream.WithExpectLastSequencePerSubject(e.Revision()), jetstream.WithMsgTTL(ttl(r.Expires.Sub(s.now()))))
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence {
		return nil
	}
	return err
}

// pointAsk makes the reuse key name id, for life: created when there was
// none, swapped for the prior one only if nobody else swapped it first.
func (s *Store) pointAsk(ctx context.Context, key string, prior jetstream.KeyValueEntry, id string, life time.Duration) error {
	if prior == nil {
		_, err := s.kv.Create(ctx, key, []byte(id), jetstream.KeyTTL(ttl(life)))
		return err
	}
	msg := &nats.Msg{Subject: "$KV." + Bucket + "." + key, Data: []byte(id)}
	_, err := s.js.PublishMsg(ctx, msg,
		jetstream.WithExpectLastSequencePerSubject(prior.Revision()), jetstream.WithMsgTTL(ttl(life)))
	return err
}

// check refuses a request this package would not record.
func (r Request) check() error {
	var errs []string
	if r.Tool == "" {
		errs = append(errs, "no tool")
	}
	if r.Subject == "" {
		errs = append(errs, "no subject")
	}
	if r.MaxGrantAgeSeconds == 0 {
		errs = append(errs, "no grant age")
	}
	if r.MaterialDigest != wire.MaterialDigest(r.Material) {
		errs = append(errs, "a material digest that is not the digest of its material")
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %s", ErrInvalid, strings.Join(errs, ", "))
	}
	return nil
}

// Get returns the request id and its decision (nil when undecided). A
// missing or expired request, or an id that is not valid, is ErrNotFound.
func (s *Store) Get(ctx context.Context, id string) (Request, *Decision, error) {
	r, d, err := s.Lookup(ctx, id)
	if err != nil {
		return Request{}, nil, err
	}
	if !s.now().Before(r.Expires) {
		return Request{}, nil, ErrNotFound
	}
	return r, d, nil
}

// Lookup is Get, but returns a request that expired no longer than
// ExpiredKept ago, without its decision, so that its caller can be told it
// expired.
func (s *Store) Lookup(ctx context.Context, id string) (Request, *Decision, error) {
	if !ValidID(id) {
		return Request{}, nil, ErrNotFound
	}
	var r Request
	if err := s.read(ctx, requestKey(id), &r); err != nil {
		return Request{}, nil, err
	}
	if r.ID != id {
		return Request{}, nil, fmt.Errorf("%w: request %s is recorded under another id", ErrInvalid, id)
	}
	if !s.now().Before(r.Expires) {
		return r, nil, nil
	}
	var d Decision
	switch err := s.read(ctx, decisionKey(id), &d); {
	case errors.Is(err, ErrNotFound):
		return r, nil, nil
	case err != nil:
		return Request{}, nil, err
	}
	if d.ID != id || (d.Verdict != Approved && d.Verdict != Denied) || (d.Verdict == Approved && d.Grant == "") {
		return Request{}, nil, fmt.Errorf("%w: the decision on request %s is malformed", ErrInvalid, id)
	}
	return r, &d, nil
}

// read decodes the value of key into v; a missing key is ErrNotFound.
func (s *Store) read(ctx context.Context, key string, v any) error {
	s.reads.Add(1)
	e, err := s.kv.Get(ctx, key)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return ErrNotFound
	case err != nil:
		return fmt.Errorf("pending: reading %s: %w", key, err)
	}
	if err := json.Unmarshal(e.Value(), v); err != nil {
		return fmt.Errorf("%w: %s does not decode: %v", ErrInvalid, key, err)
	}
	return nil
}

// Decide records d on its request, once. A second decision is ErrDecided; a
// missing or expired request is ErrNotFound; an approval without a grant, a
// denial with one, or a decision without an approver is ErrInvalid. The
// decision lives only as long as its request does not expire.
func (s *Store) Decide(ctx context.Context, d Decision) error {
	switch {
	case !ValidID(d.ID):
		return ErrNotFound
	case d.Verdict != Approved && d.Verdict != Denied:
		return fmt.Errorf("%w: verdict %q", ErrInvalid, d.Verdict)
	case d.Verdict == Approved && d.Grant == "":
		return fmt.Errorf("%w: an approval without a grant", ErrInvalid)
	case d.Verdict == Denied && d.Grant != "":
		return fmt.Errorf("%w: a denial with a grant", ErrInvalid)
	case d.Approver == "":
		return fmt.Errorf("%w: a decision without an approver", ErrInvalid)
	}
	r, prior, err := s.Get(ctx, d.ID)
	if err != nil {
		return err
	}
	if prior != nil {
		return ErrDecided
	}
	if d.Decided.IsZero() {
		d.Decided = s.now().UTC()
	}
	body, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("pending: encoding decision: %w", err)
	}
	left := r.Expires.Sub(s.now())
	if left <= 0 {
		return ErrNotFound
	}
	if _, err := s.kv.Create(ctx, decisionKey(d.ID), body, jetstream.KeyTTL(ttl(left))); err != nil {
		if errors.Is(err, jetstream.ErrKeyExists) {
			return ErrDecided
		}
		return fmt.Errorf("pending: recording decision: %w", err)
	}
	return nil
}

// ttl is d rounded up to a whole second, at least one: the granularity of a
// per-key TTL.
func ttl(d time.Duration) time.Duration {
	if d < time.Second {
		return time.Second
	}
	return (d + time.Second - 1).Truncate(time.Second)
}
