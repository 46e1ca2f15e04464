package approvals

import (
	"crypto/rand"
	"crypto/subtle"
	"sync"
	"time"
)

// Approver is a signed-in person as their identity provider vouched for them in the ID token:
// what the inbox and a decision are judged on, and what a grant names.
type Approver struct {
	Subject      string
	Tenant       string
	Clearance    string
	Compartments []string
}

// session is one signed-in approver. Its id travels only in the session cookie; its CSRF token
// only in the forms of its pages.
type session struct {
	id       string
	csrf     string
	approver Approver
	expires  time.Time
}

// login is a sign-in under way, from /login to /callback: the PKCE verifier and nonce never leave
// the server, and binding is the value of the cookie set on the browser that began it.
type login struct {
	verifier, nonce, binding, next string
	expires                        time.Time
}

// loginTTL is how long a sign-in may take at the identity provider.
const loginTTL = 10 * time.Minute

// maxLogins bounds the sign-ins under way; beyond it the oldest is dropped.
const maxLogins = 1000

// sessions is the server-side session store, bounded.
type sessions struct {
	mu     sync.Mutex
	max    int
	byID   map[string]*session
	logins map[string]*login // by OAuth state
}

func newSessions(max int) *sessions {
	return &sessions{max: max, byID: map[string]*session{}, logins: map[string]*login{}}
}

// randomToken is 256 random bits, text.
func randomToken() string { return rand.Text() + rand.Text() }

// create starts a session for a, ending at expires. When the store is full, expired sessions go
// first, then the one ending soonest.
func (s *sessions) create(a Approver, now, expires time.Time) *session {
	ss := &session{id: randomToken(), csrf: randomToken(), approver: a, expires: expires}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.byID) >= s.max {
		for id, old := range s.byID {
			if !now.Before(old.expires) {
				delete(s.byID, id)
			}
		}
	}
	for len(s.byID) >= s.max {
		var soonest *session
		for _, old := range s.byID {
			if soonest == nil || old.expires.Before(soonest.expires) {
				soonest = old
			}
		}
		delete(s.byID, soonest.id)
	}
	s.byID[ss.id] = ss
	return ss
}

// get is the live session with id; an expired one is removed and not answered.
func (s *sessions) get(id string, now time.Time) (*session, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss, ok := s.byID[id]
	if !ok {
		return nil, false
	}
	if !now.Before(ss.expires) {
		delete(s.byID, id)
		return nil, false
	}
	return ss, true
}

// end removes a session.
func (s *sessions) end(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byID, id)
}

// beginLogin records a sign-in under a fresh state, answering the state.
func (s *sessions) beginLogin(l *login, now time.Time) string {
	state := randomToken()
	s.mu.Lock()
	defer s.mu.Unlock()
	for st, old := range s.logins {
		if !now.Before(old.expires) {
			delete(s.logins, st)
		}
	}
	for len(s.logins) >= maxLogins {
		var oldest string
		for st, old := range s.logins {
			if oldest == "" || old.expires.Before(s.logins[oldest].expires) {
				oldest = st
			}
		}
		delete(s.logins, oldest)
	}
	s.logins[state] = l
	return state
}

// finishLogin takes the sign-in recorded under state, once, if it is unexpired and was begun by
// the browser holding binding.
func (s *sessions) finishLogin(state, binding string, now time.Time) (*login, bool) {
	s.mu.Lock()
	l, ok := s.logins[state]
	delete(s.logins, state)
	s.mu.Unlock()
	if !ok || !now.Before(l.expires) || binding == "" ||
		subtle.ConstantTimeCompare([]byte(l.binding), []byte(binding)) != 1 {
		return nil, false
	}
	return l, true
}

// checkCSRF reports whether token is this session's CSRF token, compared in constant time.
func (ss *session) checkCSRF(token string) bool {
	return token != "" && subtle.ConstantTimeCompare([]byte(ss.csrf), []byte(token)) == 1
}
