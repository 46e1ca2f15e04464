package approvals

import (
	"errors"
	"testing"
	"time"
)

func TestOneApproverSigningInAgainAndAgainSignsNobodyElseOut(t *testing.T) {
	now := time.Now()
	s := newSessions(4, 2)
	other, err := s.create(Approver{Subject: "b"}, now, now.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	var last *session
	for i := range 50 {
		if last, err = s.create(Approver{Subject: "a"}, now, now.Add(time.Hour+time.Duration(i)*time.Second)); err != nil {
			t.Fatalf("sign-in %d of a: %v", i+1, err)
		}
	}
	if _, ok := s.get(other.id, now); !ok {
		t.Fatal("another approver was signed out by one approver's sign-ins")
	}
	held := 0
	for _, ss := range s.byID {
		if ss.approver.Subject == "a" {
			held++
		}
	}
	if held != 2 {
		t.Errorf("a holds %d sessions, want the bound of 2", held)
	}
	if _, ok := s.get(last.id, now); !ok {
		t.Error("a's newest session was dropped")
	}
}

func TestAFullSessionStoreRefusesASignInRatherThanEndAnother(t *testing.T) {
	now := time.Now()
	s := newSessions(2, 2)
	soon, _ := s.create(Approver{Subject: "a"}, now, now.Add(time.Minute))
	late, _ := s.create(Approver{Subject: "b"}, now, now.Add(time.Hour))
	if _, err := s.create(Approver{Subject: "c"}, now, now.Add(30*time.Minute)); !errors.Is(err, errSessionsFull) {
		t.Fatalf("a sign-in into a full store: %v, want errSessionsFull", err)
	}
	for _, ss := range []*session{soon, late} {
		if _, ok := s.get(ss.id, now); !ok {
			t.Errorf("session %s was dropped", ss.approver.Subject)
		}
	}
	// An expired session makes room.
	if _, err := s.create(Approver{Subject: "c"}, now.Add(time.Minute), now.Add(30*time.Minute)); err != nil {
		t.Errorf("a sign-in once a session expired: %v", err)
	}
	if _, ok := s.get(late.id, now.Add(time.Hour)); ok {
		t.Error("a session is answered at its expiry")
	}
	if late.id == late.csrf || len(late.id) < 40 {
		t.Error("a session id is short or doubles as its CSRF token")
	}
}

func TestASealedSignInOpensOnlyUnalteredAndUnderItsOwnKey(t *testing.T) {
	key := make([]byte, SealKeySize)
	s, err := newSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	in := login{Verifier: "v", Nonce: "n", State: "s", Next: "/", Expires: 42}
	text, err := s.seal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out login
	if !s.open(text, &out) || out != in {
		t.Fatalf("opened %+v, want %+v", out, in)
	}
	other := make([]byte, SealKeySize)
	other[0] = 1
	o, _ := newSealer(other)
	flipped := []byte(text)
	flipped[len(flipped)/2] ^= 1
	for name, bad := range map[string]string{
		"altered":           string(flipped),
		"truncated":         text[:len(text)-2],
		"empty":             "",
		"not base64":        text + "!",
		"oversized":         text + string(make([]byte, maxSealed)),
		"under another key": func() string { v, _ := o.seal(in); return v }(),
	} {
		if s.open(bad, &login{}) {
			t.Errorf("a sign-in %s opened", name)
		}
	}
}
