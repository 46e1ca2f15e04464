package pending_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/garm-dev/garm/approvals/pending"
)

// askAs records a payment by subject of tenant for amount.
func askAs(t *testing.T, ctx context.Context, s *pending.Store, tenant, subject string, amount int) pending.Request {
	t.Helper()
	q := payment()
	q.Tenant, q.Subject = tenant, subject
	q.Material = map[string]string{"amount": fmt.Sprint(amount), "iban": "DE02120300000000202051"}
	r, err := s.Ask(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestAnInboxReadsOnlyItsTenantsRequestsAndFiltersBeforeItBounds(t *testing.T) {
	s, _ := newStore(t)
	ctx := bounded(t)
	// Another tenant's requests, and this tenant's that the approver may
	// not decide, are older than the one it may.
	for i := range 12 {
		askAs(t, ctx, s, "globex", fmt.Sprintf("g%d", i%3), i)
		askAs(t, ctx, s, "acme", fmt.Sprintf("clerk%d", i%3), i)
	}
	mine := askAs(t, ctx, s, "acme", "treasurer", 1)
	seen := 0
	keep := func(r pending.Request) bool {
		seen++
		if r.Tenant != "acme" {
			t.Errorf("the inbox read another tenant's request: %+v", r)
		}
		return r.Subject == "treasurer"
	}
	before := pending.Reads(s)
	page, err := s.Inbox(ctx, "acme", "", 3, keep)
	if err != nil {
		t.Fatal(err)
	}
	// Each of this tenant's 13 requests is read with its decision; none
	// of the other tenant's is read at all.
	if reads := pending.Reads(s) - before; reads != 2*13 {
		t.Errorf("the inbox read %d records, want 26: its cost grows with other tenants' requests", reads)
	}
	if len(page.Requests) != 1 || page.Requests[0].ID != mine.ID || page.Next != "" {
		t.Fatalf("the inbox answers %d requests, next %q; want exactly %s and the end", len(page.Requests), page.Next, mine.ID)
	}
	if seen != 13 {
		t.Errorf("the inbox judged %d requests, want this tenant's 13", seen)
	}
}

func TestAnInboxPagesOldestFirstAndAFullPageSaysWhereToGoOn(t *testing.T) {
	s, _ := newStore(t)
	ctx := bounded(t)
	var want []string
	for i := range 5 {
		want = append(want, askAs(t, ctx, s, "acme", fmt.Sprintf("p%d", i), i).ID)
	}
	all := func(pending.Request) bool { return true }
	var got []string
	after := ""
	for pages := 0; ; pages++ {
		if pages > 3 {
			t.Fatal("the inbox did not end after 3 pages of 2")
		}
		page, err := s.Inbox(ctx, "acme", after, 2, all)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page.Requests {
			got = append(got, r.ID)
		}
		if page.Next == "" {
			break
		}
		if !pending.ValidPosition(page.Next) {
			t.Fatalf("next %q is not a position", page.Next)
		}
		after = page.Next
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the pages hold %v, want %v", got, want)
	}
	for _, bad := range []string{"x", "1.abc", "00000000000000000001." + want[0] + ".x", "-0000000000000000001." + want[0]} {
		if _, err := s.Inbox(ctx, "acme", bad, 2, all); err == nil {
			t.Errorf("the position %q was taken", bad)
		}
	}
}

func TestAPageThatStopsAtItsReadBoundIsNotAnEmptyInbox(t *testing.T) {
	s, _ := newStore(t)
	ctx := bounded(t)
	for i := range pending.MaxInboxReads {
		askAs(t, ctx, s, "acme", fmt.Sprintf("clerk%d", i%10), i)
	}
	mine := askAs(t, ctx, s, "acme", "treasurer", 1)
	keep := func(r pending.Request) bool { return r.Subject == "treasurer" }
	page, err := s.Inbox(ctx, "acme", "", 10, keep)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Requests) != 0 || page.Next == "" {
		t.Fatalf("the first page holds %d requests and next %q: it read past its bound or claimed the end", len(page.Requests), page.Next)
	}
	page, err = s.Inbox(ctx, "acme", page.Next, 10, keep)
	if err != nil || len(page.Requests) != 1 || page.Requests[0].ID != mine.ID || page.Next != "" {
		t.Fatalf("the second page: %v, %d requests, next %q", err, len(page.Requests), page.Next)
	}
}
