package approvals

import (
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"slices"
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

// sessions is the server-side session store, bounded twice: each approver holds at most perApprover
// sessions, and the store at most max. Only a signed-in approver makes a session, and making one
// never ends another approver's: beyond their own bound an approver's own oldest session ends,
// and a full store refuses new sign-ins instead of signing anybody out.
type sessions struct {
	mu          sync.Mutex
	max         int
	perApprover int
	byID        map[string]*session
}

// errSessionsFull is a sign-in refused because the store holds max live sessions.
var errSessionsFull = errors.New("approvals: every session is taken")

func newSessions(max, perApprover int) *sessions {
	return &sessions{max: max, perApprover: perApprover, byID: map[string]*session{}}
}

// randomToken is 256 random bits, text.
func randomToken() string { return rand.Text() + rand.Text() }

// create starts a session for a, ending at expires. Expired sessions go first; then, when a
// already holds perApprover sessions, a's own ending soonest; and when the store is still full
// the sign-in is refused with errSessionsFull: no other approver is signed out.
func (s *sessions) create(a Approver, now, expires time.Time) (*session, error) {
	ss := &session{id: randomToken(), csrf: randomToken(), approver: a, expires: expires}
	s.mu.Lock()
	defer s.mu.Unlock()
	var own []*session
	for id, old := range s.byID {
		switch {
		case !now.Before(old.expires):
			delete(s.byID, id)
		case old.approver.Subject == a.Subject:
			own = append(own, old)
		}
	}
	slices.SortFunc(own, func(x, y *session) int { return x.expires.Compare(y.expires) })
	for len(own) >= s.perApprover {
		delete(s.byID, own[0].id)
		own = own[1:]
	}
	if len(s.byID) >= s.max {
		return nil, errSessionsFull
	}
	s.byID[ss.id] = ss
	return ss, nil
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

// checkCSRF reports whether token is this session's CSRF token, compared in constant time.
func (ss *session) checkCSRF(token string) bool {
	return token != "" && subtle.ConstantTimeCompare([]byte(ss.csrf), []byte(token)) == 1
}
