package approvals_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/garm-dev/garm/approvals"
	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	"github.com/garm-dev/garm/runtime/wire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// notified publishes a MODE_NOTIFY tool's completed row as garmd's step 10 does.
func (p *plane) notified(t *testing.T, e *ledgerv1.Event) {
	t.Helper()
	if e.Time == nil {
		e.Time = timestamppb.Now()
	}
	data, err := proto.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.js.Publish(bounded(t), wire.NotifySubject(e.GetTenant(), e.GetTool()), data); err != nil {
		t.Fatal(err)
	}
}

func row(id, tenant, subject, clearance string, compartments ...string) *ledgerv1.Event {
	return &ledgerv1.Event{
		EventId: id, Tenant: tenant, Tool: "accounts.v1.freeze_card", Outcome: "ok",
		PrincipalSubject: subject, PrincipalActor: payerAgent, ClearanceEffective: clearance, CompartmentsEffective: compartments,
	}
}

func TestTheFeedListsOnlyTheNotifiedActionsTheApproverIsClearedForNewestFirst(t *testing.T) {
	p := startDevPlane(t, func(*approvals.Config) {})
	p.notified(t, row("ev-older", "acme-bank", treasurer, "CLEARANCE_RESTRICTED", "financial"))
	p.notified(t, row("ev-other-tenant", "globex", "user:g", "CLEARANCE_INTERNAL"))
	p.notified(t, row("ev-secret", "acme-bank", "user:s", "CLEARANCE_SECRET"))
	p.notified(t, row("ev-pii", "acme-bank", "user:p", "CLEARANCE_INTERNAL", "financial", "pii"))
	p.notified(t, row("ev-no-clearance", "acme-bank", "user:n", ""))
	p.notified(t, row("ev-newer", "acme-bank", treasurer, "CLEARANCE_INTERNAL"))

	feed := p.signIn(t, "approver").get(p.base + approvals.FeedPath)
	if feed.status != http.StatusOK {
		t.Fatalf("the feed: %d\n%s", feed.status, feed.body)
	}
	newer, older := strings.Index(feed.body, "ev-newer"), strings.Index(feed.body, "ev-older")
	if newer < 0 || older < 0 || newer > older {
		t.Errorf("the feed does not list the approver's actions newest first:\n%s", feed.body)
	}
	for _, hidden := range []string{"ev-other-tenant", "ev-secret", "ev-pii", "ev-no-clearance", "user:g", "user:s", "user:p"} {
		if strings.Contains(feed.body, hidden) {
			t.Errorf("the feed shows %s, which the approver is not cleared for:\n%s", hidden, feed.body)
		}
	}
	for _, field := range []string{treasurer, payerAgent, "accounts.v1.freeze_card", `<td class="outcome">ok</td>`} {
		if !strings.Contains(feed.body, field) {
			t.Errorf("the feed's row lacks %s:\n%s", field, feed.body)
		}
	}
	// Below the clearance, and without the compartment, the same feed lists less.
	junior := p.signIn(t, "junior").get(p.base + approvals.FeedPath)
	if !strings.Contains(junior.body, "ev-newer") || strings.Contains(junior.body, "ev-older") {
		t.Errorf("an INTERNAL approver's feed:\n%s", junior.body)
	}
	una := p.signIn(t, "uncompartmented").get(p.base + approvals.FeedPath)
	if !strings.Contains(una.body, "ev-newer") || strings.Contains(una.body, "ev-older") {
		t.Errorf("an approver without the financial compartment's feed:\n%s", una.body)
	}
}

func TestTheFeedEscapesHiddenCharactersAndNeedsASignIn(t *testing.T) {
	p := startDevPlane(t, func(*approvals.Config) {})
	p.notified(t, row("ev-1", "acme-bank", "user:tess\u202e@evil", "CLEARANCE_INTERNAL"))
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(p.base + approvals.FeedPath)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || !strings.Contains(resp.Header.Get("Location"), approvals.LoginPath) {
		t.Errorf("the feed without a sign-in: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	feed := p.signIn(t, "approver").get(p.base + approvals.FeedPath)
	if strings.Contains(feed.body, "\u202e") || !strings.Contains(feed.body, `user:tess\u202e@evil`) {
		t.Errorf("the subject's override is not escaped:\n%s", feed.body)
	}
}

func TestMayWatchIsTheInboxsJudgementOverWhatTheCallWasDecidedWith(t *testing.T) {
	t.Parallel()
	a := approvals.Approver{Subject: "user:adam", Tenant: "acme-bank", Clearance: "CLEARANCE_RESTRICTED", Compartments: []string{"financial"}}
	for name, tc := range map[string]struct {
		a    approvals.Approver
		n    *ledgerv1.Event
		want bool
	}{
		"cleared":               {a, row("e", "acme-bank", "s", "CLEARANCE_RESTRICTED", "financial"), true},
		"the caller themself":   {approvals.Approver{Subject: "s", Tenant: "acme-bank", Clearance: "CLEARANCE_RESTRICTED"}, row("e", "acme-bank", "s", "CLEARANCE_INTERNAL"), true},
		"another tenant":        {a, row("e", "globex", "s", "CLEARANCE_INTERNAL"), false},
		"above the clearance":   {a, row("e", "acme-bank", "s", "CLEARANCE_SECRET"), false},
		"a compartment missing": {a, row("e", "acme-bank", "s", "CLEARANCE_INTERNAL", "pii"), false},
		"no clearance recorded": {a, row("e", "acme-bank", "s", ""), false},
		"nobody signed in":      {approvals.Approver{Tenant: "acme-bank", Clearance: "CLEARANCE_RESTRICTED"}, row("e", "acme-bank", "s", "CLEARANCE_INTERNAL"), false},
		"a clearance that lies": {approvals.Approver{Subject: "x", Tenant: "acme-bank", Clearance: "TOP"}, row("e", "acme-bank", "s", "CLEARANCE_INTERNAL"), false},
	} {
		if got := approvals.MayWatch(tc.a, tc.n); got != tc.want {
			t.Errorf("%s: MayWatch %v, want %v", name, got, tc.want)
		}
	}
}
