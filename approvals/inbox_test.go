package approvals_test

import (
	"fmt"
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/garm-dev/garm/approvals"
	"github.com/garm-dev/garm/approvals/pending"
)

// askOther records a payment by subject that is not for the approvers of the tests: in another
// tenant, or above their clearance.
func (p *plane) askOther(t *testing.T, tenant, subject, clearance string, amount int) {
	t.Helper()
	_, err := p.store.Ask(bounded(t), pending.Request{
		Tool: paymentTool, ToolTitle: "Send a payment", ApproverMinClearance: clearance,
		MaxGrantAgeSeconds: 300, Subject: subject, Tenant: tenant,
		Material: map[string]string{"amount_minor_units": fmt.Sprint(amount)},
	})
	if err != nil {
		t.Fatal(err)
	}
}

var nextLink = regexp.MustCompile(`<a id="next" href="([^"]+)">`)

func TestRequestsAnApproverMayNotDecideNeverHideTheOnesTheyMay(t *testing.T) {
	p := startDevPlane(t, func(cfg *approvals.Config) { cfg.InboxLimit = 5 })
	// Older than the approver's request: another tenant's, and their own tenant's above their
	// clearance, many more than a page.
	for i := range 12 {
		p.askOther(t, "globex", fmt.Sprintf("user:g%d", i), "CLEARANCE_RESTRICTED", i)
		p.askOther(t, "acme-bank", fmt.Sprintf("user:s%d", i), "CLEARANCE_SECRET", i)
	}
	r := p.ask(t, treasurer, nil, "125000")
	inbox := p.signIn(t, "approver").get(p.base + "/")
	if inbox.status != http.StatusOK || !strings.Contains(inbox.body, r.ID) {
		t.Fatalf("the inbox does not list the request the approver may decide:\n%s", inbox.body)
	}
	if strings.Contains(inbox.body, `id="empty"`) || strings.Contains(inbox.body, "user:g") || strings.Contains(inbox.body, "user:s") {
		t.Errorf("the inbox claims emptiness or lists others' requests:\n%s", inbox.body)
	}
}

func TestTheInboxPagesAndNeverSaysNothingIsWaitingWhenItStoppedEarly(t *testing.T) {
	p := startDevPlane(t, func(cfg *approvals.Config) { cfg.InboxLimit = 3 })
	for i := range pending.MaxInboxReads {
		p.askOther(t, "acme-bank", fmt.Sprintf("user:s%d", i%20), "CLEARANCE_SECRET", i)
	}
	var want []string
	for i := range 4 {
		want = append(want, p.ask(t, treasurer, nil, fmt.Sprint(1000+i)).ID)
	}
	b := p.signIn(t, "approver")
	first := b.get(p.base + "/")
	if strings.Contains(first.body, `id="empty"`) || !strings.Contains(first.body, `id="more-waiting"`) {
		t.Fatalf("a page that stopped at its read bound claims the inbox is empty:\n%s", first.body)
	}
	var got []string
	pg := first
	for range 5 {
		m := nextLink.FindStringSubmatch(pg.body)
		if m == nil {
			break
		}
		pg = b.get(p.base + html.UnescapeString(m[1]))
		if pg.status != http.StatusOK {
			t.Fatalf("a next page: %d", pg.status)
		}
		for _, id := range want {
			if strings.Contains(pg.body, id) {
				got = append(got, id)
			}
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the pages list %v, want every request the approver may decide, oldest first: %v", got, want)
	}
	if nextLink.MatchString(pg.body) {
		t.Error("the last page links to another")
	}
}
