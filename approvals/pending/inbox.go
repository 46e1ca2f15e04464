package pending

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// MaxInboxReads bounds the requests one page of an inbox reads: a page
// stops there even when it is not full, and says where to go on, so that
// requests an approver may not decide cost each page a bounded amount and
// never hide the ones after them.
const MaxInboxReads = 200

// InboxPage is one page of a tenant's inbox, as [Store.Inbox] answers it.
type InboxPage struct {
	// Requests are the open requests kept, oldest first.
	Requests []Request
	// Next is the position to ask the next page after, empty when the
	// tenant's inbox was read to its end: a page with no requests and a
	// Next is not an empty inbox.
	Next string
}

// ValidPosition reports whether pos is a position Inbox can answer as
// Next: the empty start, or a creation time and an id.
func ValidPosition(pos string) bool {
	if pos == "" {
		return true
	}
	t, id, ok := strings.Cut(pos, ".")
	if !ok || len(t) != 20 || !ValidID(id) {
		return false
	}
	for i := 0; i < len(t); i++ {
		if t[i] < '0' || t[i] > '9' {
			return false
		}
	}
	return true
}

// Inbox is a page of tenant's undecided, unexpired requests that keep
// accepts, oldest first, after the position after (empty: from the
// start), at most limit of them. It reads the tenant's own index keys, so
// its cost grows with that tenant's requests, not with every tenant's; it
// filters before it bounds, so requests keep refuses never push out those
// it accepts; and it reads at most MaxInboxReads requests, answering where
// to go on when it stopped early. keep is the approver's judgement
// (approvals.MayDecide); a request whose tenant is not tenant is never
// kept, whatever keep says.
func (s *Store) Inbox(ctx context.Context, tenant, after string, limit int, keep func(Request) bool) (InboxPage, error) {
	if !ValidPosition(after) {
		return InboxPage{}, fmt.Errorf("%w: inbox position %q", ErrInvalid, after)
	}
	if limit <= 0 || limit > MaxInboxReads {
		limit = MaxInboxReads
	}
	prefix := tenantInbox(tenant)
	keys, err := s.keys(ctx, prefix+"*.*")
	if err != nil {
		return InboxPage{}, err
	}
	var positions []string
	for _, k := range keys {
		if pos := strings.TrimPrefix(k, prefix); pos > after && ValidPosition(pos) {
			positions = append(positions, pos)
		}
	}
	slices.Sort(positions)
	var page InboxPage
	reads := 0
	for i, pos := range positions {
		if len(page.Requests) == limit || reads == MaxInboxReads {
			page.Next = positions[i-1]
			break
		}
		reads++
		_, id, _ := strings.Cut(pos, ".")
		r, d, err := s.Get(ctx, id)
		switch {
		case errors.Is(err, ErrNotFound) || errors.Is(err, ErrInvalid):
			continue
		case err != nil:
			return InboxPage{}, err
		case d != nil || r.Tenant != tenant || inboxPosition(r) != pos || !keep(r):
			continue
		}
		page.Requests = append(page.Requests, r)
	}
	return page, nil
}

// Open returns every tenant's undecided, unexpired requests, oldest first,
// at most limit of them (no limit when limit <= 0): for operators and
// tests. An approver's inbox is [Store.Inbox], which reads one tenant's.
func (s *Store) Open(ctx context.Context, limit int) ([]Request, error) {
	keys, err := s.keys(ctx, RequestPrefix+"*")
	if err != nil {
		return nil, err
	}
	var open []Request
	for _, key := range keys {
		r, d, err := s.Get(ctx, strings.TrimPrefix(key, RequestPrefix))
		switch {
		case errors.Is(err, ErrNotFound) || errors.Is(err, ErrInvalid):
			continue
		case err != nil:
			return nil, err
		case d != nil:
			continue
		}
		open = append(open, r)
	}
	slices.SortFunc(open, func(a, b Request) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	if limit > 0 && len(open) > limit {
		open = open[:limit]
	}
	return open, nil
}

// keys are the bucket's keys matching filter, read from the stream's
// subject index (a stream info request) rather than a watch, so that
// listing creates no consumer: neither identity may create one.
func (s *Store) keys(ctx context.Context, filter string) ([]string, error) {
	stream, err := s.js.Stream(ctx, kvStream)
	if err != nil {
		return nil, fmt.Errorf("pending: listing keys: %w", err)
	}
	subjectPrefix := "$KV." + Bucket + "."
	info, err := stream.Info(ctx, jetstream.WithSubjectFilter(subjectPrefix+filter))
	if err != nil {
		return nil, fmt.Errorf("pending: listing keys: %w", err)
	}
	keys := make([]string, 0, len(info.State.Subjects))
	for subject := range info.State.Subjects {
		keys = append(keys, strings.TrimPrefix(subject, subjectPrefix))
	}
	return keys, nil
}
