package approvals

import (
	"bytes"
	"errors"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/garm-dev/garm/approvals/pending"
)

// pageData is what every page template reads.
type pageData struct {
	Title    string
	Base     string
	Approver *Approver
	CSRF     string

	Requests []pending.Request
	// Next is the link to the inbox's next page, empty on its last; Continued says this page is
	// not the first.
	Next      string
	Continued bool
	Request   *pending.Request
	Decision  *pending.Decision
	Material  []materialRow
	// Escaped says a material row is marked.
	Escaped bool
	Age     string
	Left    string

	// Notified is the feed's actions, newest first; Cut says rows of its window were unread.
	Notified []Notified
	Cut      bool

	Message, Link, LinkText string
}

// materialRow is one material value as the page shows it: Text is [visible]'s, and Escaped marks
// a row whose value held characters shown as escapes.
type materialRow struct {
	Path, Text string
	Escaped    bool
	// Reading is the value as a person reads it ([reading]), shown beside Text, never instead.
	Reading string
}

// render executes the named page into a buffer first, so a template error never sends half a
// page.
func (s *Service) render(w http.ResponseWriter, status int, name string, d pageData) {
	d.Base = s.base
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, name, d); err != nil {
		s.log.Error("approvals: render "+name, "err", err)
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// signedIn fills the page's header for ss.
func signedIn(d pageData, ss *session) pageData {
	if ss != nil {
		a := ss.approver
		d.Approver, d.CSRF = &a, ss.csrf
	}
	return d
}

// message answers a page with one sentence and an optional link.
func (s *Service) message(w http.ResponseWriter, r *http.Request, status int, title, msg, link, linkText string) {
	ss, _ := s.currentSession(r)
	s.render(w, status, "message.html", signedIn(pageData{Title: title, Message: msg, Link: link, LinkText: linkText}, ss))
}

// notFound is the one answer for a request that is missing, expired, malformed, or that this
// approver may not decide: the same status and the same page, so the answer reveals nothing.
func (s *Service) notFound(w http.ResponseWriter, r *http.Request, _ error) {
	s.message(w, r, http.StatusNotFound, "Not found", "There is no such request waiting for your decision.", s.base+"/", "Back to the inbox")
}

// toSignIn sends a browser without a live session to sign in, coming back to where it was.
func (s *Service) toSignIn(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, s.base+LoginPath+"?next="+url.QueryEscape(r.URL.Path), http.StatusSeeOther)
}

// serveInbox lists a page of the open requests this approver may decide, oldest first. The
// approver's tenant is read alone and filtered by [MayDecide] before the page is bounded, so
// requests this approver may not decide never hide those they may; a page that stopped early
// links to the next and never says that nothing is waiting.
func (s *Service) serveInbox(w http.ResponseWriter, r *http.Request) {
	ss, ok := s.currentSession(r)
	if !ok {
		s.toSignIn(w, r)
		return
	}
	after := r.URL.Query().Get("after")
	if !pending.ValidPosition(after) {
		after = ""
	}
	a := ss.approver
	now := s.cfg.Now()
	page, err := s.requests.Inbox(r.Context(), a.Tenant, after, s.cfg.InboxLimit, func(req pending.Request) bool {
		return MayDecide(a, req) && now.Before(req.Expires)
	})
	if err != nil {
		s.log.Error("approvals: read the inbox", "err", err)
		s.message(w, r, http.StatusServiceUnavailable, "Inbox unavailable", "The requests could not be read. Try again shortly.", "", "")
		return
	}
	d := pageData{Title: "Inbox", Requests: page.Requests, Continued: after != ""}
	if page.Next != "" {
		d.Next = s.base + "/?after=" + url.QueryEscape(page.Next)
	}
	s.render(w, http.StatusOK, "inbox.html", signedIn(d, ss))
}

// serveRequest shows one request to an approver who may decide it.
func (s *Service) serveRequest(w http.ResponseWriter, r *http.Request) {
	ss, ok := s.currentSession(r)
	if !ok {
		s.toSignIn(w, r)
		return
	}
	id := r.PathValue("id")
	if !pending.ValidID(id) {
		s.notFound(w, r, nil)
		return
	}
	req, d, err := s.requests.Get(r.Context(), id)
	switch {
	case errors.Is(err, pending.ErrNotFound):
		s.notFound(w, r, err)
		return
	case err != nil:
		s.log.Error("approvals: read a request", "err", err)
		s.message(w, r, http.StatusServiceUnavailable, "Request unavailable", "The request could not be read. Try again shortly.", "", "")
		return
	}
	now := s.cfg.Now()
	if !MayDecide(ss.approver, req) || !now.Before(req.Expires) {
		s.notFound(w, r, nil)
		return
	}
	var rows []materialRow
	anyEscaped := false
	for _, path := range slices.Sorted(maps.Keys(req.Material)) {
		text, escaped := visible(req.Material[path])
		p, pathEscaped := visible(path)
		row := materialRow{Path: p, Text: text, Escaped: escaped || pathEscaped}
		if !row.Escaped {
			row.Reading = reading(path, req.Material)
		}
		rows = append(rows, row)
		anyEscaped = anyEscaped || escaped || pathEscaped
	}
	s.render(w, http.StatusOK, "request.html", signedIn(pageData{
		Title: req.ToolTitle, Request: &req, Decision: d, Material: rows, Escaped: anyEscaped,
		Age: now.Sub(req.Created).Round(time.Second).String(), Left: req.Expires.Sub(now).Round(time.Second).String(),
	}, ss))
}

const (
	verdictApprove = pending.Approved
	verdictDeny    = pending.Denied
)

// serveDecision records a verdict posted from a request's page: a live session, the session's
// CSRF token, and the right to decide judged again now.
func (s *Service) serveDecision(verdict pending.Verdict) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ss, ok := s.currentSession(r)
		if !ok {
			s.message(w, r, http.StatusUnauthorized, "Signed out", "Your sign-in has ended. Nothing was decided: sign in again and decide once more.", s.base+LoginPath, "Sign in")
			return
		}
		if !s.formCSRF(w, r, ss) {
			s.message(w, r, http.StatusForbidden, "Refused", "This form was not sent from this service's own page. Nothing was decided.", s.base+"/", "Back to the inbox")
			return
		}
		id := r.PathValue("id")
		_, _, err := s.decide(r.Context(), ss.approver, id, verdict)
		switch {
		case err == nil:
			s.log.Info("approvals: decided", "request", id, "verdict", verdict, "approver", ss.approver.Subject)
			http.Redirect(w, r, s.base+RequestsPath+id, http.StatusSeeOther)
		case errors.Is(err, errNotDecidable):
			s.notFound(w, r, err)
		case errors.Is(err, errAlreadyDecided):
			s.message(w, r, http.StatusConflict, "Already decided", "This request already has a decision; yours was not recorded.", s.base+RequestsPath+id, "See the decision")
		default:
			s.log.Error("approvals: a decision was not recorded", "request", id, "err", err)
			s.message(w, r, http.StatusServiceUnavailable, "Not decided", "The decision could not be recorded, so nothing was decided. Try again shortly.", s.base+RequestsPath+id, "Back to the request")
		}
	}
}
