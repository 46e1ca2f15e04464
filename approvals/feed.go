package approvals

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"
)

// FeedPath is the page of recent notified actions.
const FeedPath = "/feed"

// Feed bounds: how far back the feed reads, and how many rows it reads at most.
const (
	// FeedWindow is how far back the feed looks.
	FeedWindow = 24 * time.Hour
	// MaxFeedReads bounds the notified rows one page reads: the stream's last ones, whoever
	// may see them.
	MaxFeedReads = 500
	// DefaultFeedLimit is how many actions the feed page lists.
	DefaultFeedLimit = 50
	// feedTimeout bounds one page's reads.
	feedTimeout = 10 * time.Second
)

// Notified is one action of a MODE_NOTIFY tool as GARM_NOTIFY carries it: its completed
// ledger row (step 10). The row holds no request or answer value.
type Notified = *ledgerv1.Event

// Feed reads recent notified actions: tenant's rows of the last window, newest first, those
// keep accepts, at most limit; cut says rows of the window were left unread (MaxFeedReads).
type Feed interface {
	Recent(ctx context.Context, tenant string, since time.Time, limit int, keep func(Notified) bool) (rows []Notified, cut bool, err error)
}

// MayWatch reports whether approver a may see the notified action n: the inbox's judgement
// ([MayDecide]'s tenant, clearance and compartments), over what the call was decided with —
// its effective clearance and compartments — so that nobody reads of an action they were not
// cleared to make (decision 0114). Four eyes does not apply: nothing is decided here.
func MayWatch(a Approver, n Notified) bool {
	return cleared(a, n.GetTenant(), n.GetClearanceEffective(), n.GetCompartmentsEffective())
}

// NotifyStream reads GARM_NOTIFY through js by message gets of the tenant's subjects, the last
// MaxFeedReads messages of the stream at most: it creates no consumer (the approvals identity
// may create none) and writes nothing.
type NotifyStream struct{ js jetstream.JetStream }

// NewNotifyStream is the feed over GARM_NOTIFY through js.
func NewNotifyStream(js jetstream.JetStream) *NotifyStream { return &NotifyStream{js: js} }

var _ Feed = (*NotifyStream)(nil)

// Recent implements [Feed].
func (f *NotifyStream) Recent(ctx context.Context, tenant string, since time.Time, limit int, keep func(Notified) bool) ([]Notified, bool, error) {
	stream, err := f.js.Stream(ctx, wire.NotifyStream)
	if err != nil {
		return nil, false, fmt.Errorf("approvals: reading %s: %w", wire.NotifyStream, err)
	}
	info := stream.CachedInfo().State
	if info.Msgs == 0 {
		return nil, false, nil
	}
	seq := info.FirstSeq
	if info.LastSeq >= MaxFeedReads && info.LastSeq-MaxFeedReads+1 > seq {
		seq = info.LastSeq - MaxFeedReads + 1
	}
	cut := seq > info.FirstSeq
	subject := "garm.v1.notify." + wire.Token(tenant) + ".>"
	var kept []Notified
	for read := 0; read < MaxFeedReads && seq <= info.LastSeq; read++ {
		msg, err := stream.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subject))
		switch {
		case errors.Is(err, jetstream.ErrMsgNotFound):
			return newest(kept, limit), cut, nil
		case err != nil:
			return nil, false, fmt.Errorf("approvals: reading %s: %w", wire.NotifyStream, err)
		}
		seq = msg.Sequence + 1
		if msg.Time.Before(since) {
			cut = false // the window's start was read
			continue
		}
		var e ledgerv1.Event
		if proto.Unmarshal(msg.Data, &e) != nil || e.GetTenant() != tenant || !keep(&e) {
			continue
		}
		kept = append(kept, &e)
	}
	return newest(kept, limit), cut, nil
}

// newest is the last limit of rows, newest first.
func newest(rows []Notified, limit int) []Notified {
	if len(rows) > limit {
		rows = rows[len(rows)-limit:]
	}
	out := make([]Notified, 0, len(rows))
	for i := len(rows) - 1; i >= 0; i-- {
		out = append(out, rows[i])
	}
	return out
}

// SetFeed gives the service the notified actions it lists at [FeedPath]; without one the page
// says there is no feed. Call it before [Service.Handler].
func (s *Service) SetFeed(f Feed) { s.feed = f }

// serveFeed lists the recent notified actions this approver may see, newest first: the
// approver's tenant is read alone and filtered by [MayWatch] before the page is bounded.
func (s *Service) serveFeed(w http.ResponseWriter, r *http.Request) {
	ss, ok := s.currentSession(r)
	if !ok {
		s.toSignIn(w, r)
		return
	}
	if s.feed == nil {
		s.message(w, r, http.StatusNotFound, "No feed", "This service reads no notified actions.", s.base+"/", "Back to the inbox")
		return
	}
	a := ss.approver
	ctx, cancel := context.WithTimeout(r.Context(), feedTimeout)
	defer cancel()
	rows, cut, err := s.feed.Recent(ctx, a.Tenant, s.cfg.Now().Add(-FeedWindow), DefaultFeedLimit, func(n Notified) bool { return MayWatch(a, n) })
	if err != nil {
		s.log.Error("approvals: read the feed", "err", err)
		s.message(w, r, http.StatusServiceUnavailable, "Feed unavailable", "The notified actions could not be read. Try again shortly.", "", "")
		return
	}
	s.render(w, http.StatusOK, "feed.html", signedIn(pageData{Title: "Notified actions", Notified: rows, Cut: cut}, ss))
}
