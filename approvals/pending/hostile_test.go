package pending_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/garm-dev/garm/approvals/pending"
)

func TestValidIDAcceptsOnlyWhatNewIDMakes(t *testing.T) {
	for range 200 {
		id, err := pending.NewID()
		if err != nil {
			t.Fatal(err)
		}
		if len(id) != 26 || !pending.ValidID(id) {
			t.Fatalf("NewID made %q, which ValidID refuses", id)
		}
	}
	good, _ := pending.NewID()
	// The last character carries 3 bits of the id and 2 zero bits; one
	// whose zero bits are set decodes to the same bytes but is another
	// spelling.
	const alphabet = "abcdefghijklmnopqrstuvwxyz234567"
	nonCanonical := good[:25] + string(alphabet[strings.IndexByte(alphabet, good[25])+1])
	for _, id := range []string{
		"", good[:25], good + "a", strings.ToUpper(good), good[:24] + "..", good[:25] + ">", good[:25] + "*",
		good[:25] + "1", good[:25] + "8", good[:25] + "=", good[:12] + "." + good[13:], "req." + good, "../" + good,
		good[:25] + "\n", nonCanonical,
	} {
		if pending.ValidID(id) {
			t.Errorf("ValidID accepted %q", id)
		}
	}
}

func TestHostileIDsAndDecisionsAreRefused(t *testing.T) {
	s, _ := newStore(t)
	ctx := bounded(t)
	r, err := s.Ask(ctx, payment())
	if err != nil {
		t.Fatal(err)
	}
	missing, _ := pending.NewID()
	for _, id := range []string{"", "..", ">", "*", "req." + r.ID, r.ID + ".x", r.ID[:25] + ">", r.ID[:25] + "*", strings.ToUpper(r.ID), missing} {
		if _, _, err := s.Get(ctx, id); !errors.Is(err, pending.ErrNotFound) {
			t.Errorf("Get(%q): %v, want ErrNotFound", id, err)
		}
		if err := s.Decide(ctx, pending.Decision{ID: id, Verdict: pending.Denied, Approver: "cfo"}); !errors.Is(err, pending.ErrNotFound) {
			t.Errorf("Decide(%q): %v, want ErrNotFound", id, err)
		}
	}
	for name, d := range map[string]pending.Decision{
		"an approval without a grant": {ID: r.ID, Verdict: pending.Approved, Approver: "cfo"},
		"a denial with a grant":       {ID: r.ID, Verdict: pending.Denied, Approver: "cfo", Grant: "g"},
		"no approver":                 {ID: r.ID, Verdict: pending.Denied},
		"an unknown verdict":          {ID: r.ID, Verdict: "maybe", Approver: "cfo"},
	} {
		if err := s.Decide(ctx, d); !errors.Is(err, pending.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	if _, d, err := s.Get(ctx, r.ID); err != nil || d != nil {
		t.Errorf("a refused decision was recorded: %v %+v", err, d)
	}
}

func TestAnAskWhoseDigestIsNotItsMaterialsIsRefused(t *testing.T) {
	s, _ := newStore(t)
	r := payment()
	r.MaterialDigest = "sha256:" + strings.Repeat("0", 64)
	if _, err := s.Ask(bounded(t), r); !errors.Is(err, pending.ErrInvalid) {
		t.Errorf("Ask: %v, want ErrInvalid", err)
	}
	for name, change := range map[string]func(*pending.Request){
		"no tool":      func(r *pending.Request) { r.Tool = "" },
		"no subject":   func(r *pending.Request) { r.Subject = "" },
		"no grant age": func(r *pending.Request) { r.MaxGrantAgeSeconds = 0 },
	} {
		r := payment()
		change(&r)
		if _, err := s.Ask(bounded(t), r); !errors.Is(err, pending.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
}

func TestAnExpiredRequestIsNotFoundCannotBeDecidedAndHidesItsDecision(t *testing.T) {
	s, _ := newStore(t)
	ctx := bounded(t)
	r, err := s.Ask(ctx, payment())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Decide(ctx, pending.Decision{ID: r.ID, Verdict: pending.Approved, Approver: "cfo", Grant: "g"}); err != nil {
		t.Fatal(err)
	}
	other, err := s.Ask(ctx, func() pending.Request { q := payment(); q.Subject = "clerk"; return q }())
	if err != nil {
		t.Fatal(err)
	}
	later := r.Expires.Add(time.Second)
	pending.SetClock(s, func() time.Time { return later })
	if _, _, err := s.Get(ctx, r.ID); !errors.Is(err, pending.ErrNotFound) {
		t.Errorf("Get of an expired request: %v, want ErrNotFound", err)
	}
	got, d, err := s.Lookup(ctx, r.ID)
	if err != nil || d != nil {
		t.Fatalf("Lookup of an expired request: %v, decision %+v (a decision must not outlive its request)", err, d)
	}
	if st := got.Status(d, later); st != pending.StatusExpired {
		t.Errorf("status %q, want expired", st)
	}
	if err := s.Decide(ctx, pending.Decision{ID: other.ID, Verdict: pending.Denied, Approver: "cfo"}); !errors.Is(err, pending.ErrNotFound) {
		t.Errorf("a decision on an expired request: %v, want ErrNotFound", err)
	}
	if open, err := s.Open(ctx, 0); err != nil || len(open) != 0 {
		t.Errorf("the inbox holds expired requests: %v %v", open, err)
	}
	again, err := s.Ask(ctx, payment())
	if err != nil || again.ID == r.ID {
		t.Errorf("an ask after expiry reused the expired request: %v", err)
	}
}

func TestTheBucketForgetsARequestAndItsDecisionWhenTheGrantAgeRunsOut(t *testing.T) {
	s, js := newStore(t)
	ctx := bounded(t)
	q := payment()
	q.MaxGrantAgeSeconds = 1
	r, err := s.Ask(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Decide(ctx, pending.Decision{ID: r.ID, Verdict: pending.Denied, Approver: "cfo"}); err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, pending.Bucket)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, decErr := kv.Get(ctx, "dec."+r.ID)
		_, askErr := kv.Get(ctx, pending.AskKey(r))
		if decErr != nil && askErr != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the decision or reuse key outlived the request's expiry: %v %v", decErr, askErr)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, _, err := s.Get(ctx, r.ID); !errors.Is(err, pending.ErrNotFound) {
		t.Errorf("Get after expiry: %v", err)
	}
}

func TestAskingAgainAfterARequestExpiredMakesOneNewRequestAndReusesIt(t *testing.T) {
	s, _ := newStore(t)
	ctx := bounded(t)
	q := payment()
	q.MaxGrantAgeSeconds = 1
	first, err := s.Ask(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	// Past its expiry the server's TTL has removed the reuse key.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, _, err := s.Lookup(ctx, first.ID); err == nil && time.Now().After(first.Expires.Add(1500*time.Millisecond)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the request did not expire")
		}
		time.Sleep(100 * time.Millisecond)
	}
	second, err := s.Ask(ctx, q)
	if err != nil || second.ID == first.ID {
		t.Fatalf("asking after expiry: %v, %s", err, second.ID)
	}
	third, err := s.Ask(ctx, q)
	if err != nil || third.ID != second.ID {
		t.Fatalf("the new request is not reused: %v, %s vs %s", err, third.ID, second.ID)
	}
}
