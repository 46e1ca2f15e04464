package approvals

import (
	"testing"
	"time"
)

func TestTheSessionStoreIsBoundedAndDropsTheSessionEndingSoonest(t *testing.T) {
	now := time.Now()
	s := newSessions(2)
	soon := s.create(Approver{Subject: "a"}, now, now.Add(time.Minute))
	late := s.create(Approver{Subject: "b"}, now, now.Add(time.Hour))
	third := s.create(Approver{Subject: "c"}, now, now.Add(30*time.Minute))
	if _, ok := s.get(soon.id, now); ok {
		t.Error("the session ending soonest was kept beyond the bound")
	}
	for _, ss := range []*session{late, third} {
		if _, ok := s.get(ss.id, now); !ok {
			t.Errorf("session %s was dropped", ss.approver.Subject)
		}
	}
	if _, ok := s.get(late.id, now.Add(time.Hour)); ok {
		t.Error("a session is answered at its expiry")
	}
	if late.id == late.csrf || len(late.id) < 40 {
		t.Error("a session id is short or doubles as its CSRF token")
	}
}

func TestASignInIsFinishedOnceAndOnlyByTheBrowserThatBeganIt(t *testing.T) {
	now := time.Now()
	s := newSessions(10)
	begin := func() (string, *login) {
		l := &login{binding: randomToken(), expires: now.Add(loginTTL)}
		return s.beginLogin(l, now), l
	}
	state, l := begin()
	if _, ok := s.finishLogin(state, "another browser", now); ok {
		t.Error("a sign-in was finished by a browser without its binding")
	}
	if _, ok := s.finishLogin(state, l.binding, now); ok {
		t.Error("a sign-in presented wrongly could be finished after")
	}
	state, l = begin()
	if _, ok := s.finishLogin(state, "", now); ok {
		t.Error("a sign-in was finished without a binding")
	}
	state, l = begin()
	if _, ok := s.finishLogin(state, l.binding, now.Add(loginTTL)); ok {
		t.Error("an expired sign-in was finished")
	}
	state, l = begin()
	if _, ok := s.finishLogin(state, l.binding, now); !ok {
		t.Fatal("the right browser could not finish its sign-in")
	}
	if _, ok := s.finishLogin(state, l.binding, now); ok {
		t.Error("a sign-in was finished twice")
	}
}
