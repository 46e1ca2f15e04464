package approval_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/garm-dev/garm/approvals/pending"
	"github.com/garm-dev/garm/daemon/internal/approval"
	"github.com/garm-dev/garm/daemon/internal/call"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/nats-io/nats.go/jetstream"
)

func TestCheckBaseURLAcceptsOnlyAnAbsoluteHTTPURLWithoutExtras(t *testing.T) {
	for raw, ok := range map[string]bool{
		"https://approvals.example":         true,
		"http://127.0.0.1:7451":             true,
		"https://approvals.example/inbox":   true,
		"":                                  false,
		"/requests":                         false,
		"ftp://approvals.example":           false,
		"https://approvals.example?x=1":     false,
		"https://approvals.example#top":     false,
		"https://user:pw@approvals.example": false,
		"javascript:alert(1)":               false,
	} {
		if err := approval.CheckBaseURL(raw); (err == nil) != ok {
			t.Errorf("CheckBaseURL(%q) = %v, want ok=%v", raw, err, ok)
		}
	}
}

func TestARequestIsRedeemedOnlyByExactlyItsCallerForItsTool(t *testing.T) {
	_, js := garmtooltest.ConnectJetStream(t, garmtooltest.StartJetStream(t).URL())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	store, err := pending.Ensure(ctx, js, 1)
	if err != nil {
		t.Fatal(err)
	}
	desk, err := approval.New(store, "https://approvals.example/")
	if err != nil {
		t.Fatal(err)
	}
	agent := &call.Principal{Subject: "user:p", Tenant: "acme", Act: []call.Actor{{Subject: "agent:a"}}}
	pay := &call.Tool{FQN: "bank.v1.pay", Policy: &toolv1.ToolPolicy{Approval: &toolv1.ToolPolicy_Approval{
		Mode: toolv1.ToolPolicy_Approval_MODE_GRANT, MaxGrantAgeSeconds: 300,
	}}}
	r, err := store.Ask(ctx, pending.Request{Tool: pay.FQN, Subject: agent.Subject, Act: []string{"agent:a"}, Tenant: "acme", MaxGrantAgeSeconds: 300})
	if err != nil {
		t.Fatal(err)
	}
	if got := desk.URL(r.ID); got != "https://approvals.example/requests/"+r.ID {
		t.Errorf("URL %q", got)
	}
	if _, _, err := desk.Redeem(ctx, r.ID, agent, pay); !isOutcome(err, approval.Undecided) {
		t.Fatalf("an undecided request: %v", err)
	}
	if err := store.Decide(ctx, pending.Decision{ID: r.ID, Verdict: pending.Approved, Approver: "user:b", Grant: "g"}); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		p *call.Principal
		t *call.Tool
	}{
		"the subject without its agent": {&call.Principal{Subject: "user:p", Tenant: "acme"}, pay},
		"another agent":                 {&call.Principal{Subject: "user:p", Tenant: "acme", Act: []call.Actor{{Subject: "agent:b"}}}, pay},
		"another tenant":                {&call.Principal{Subject: "user:p", Tenant: "globex", Act: agent.Act}, pay},
		"the agent itself":              {&call.Principal{Subject: "agent:a", Tenant: "acme"}, pay},
		"another tool":                  {agent, &call.Tool{FQN: "bank.v1.refund", Policy: pay.Policy}},
	} {
		if _, _, err := desk.Redeem(ctx, r.ID, c.p, c.t); !isOutcome(err, approval.Unknown) {
			t.Errorf("%s: %v", name, err)
		}
		if c.t == pay {
			if _, err := desk.Status(ctx, r.ID, c.p, time.Now()); !errors.Is(err, pending.ErrNotFound) {
				t.Errorf("%s asking after it: %v", name, err)
			}
		}
	}
	g, asked, err := desk.Redeem(ctx, r.ID, agent, pay)
	if err != nil || g != "g" || asked.MaterialDigest != r.MaterialDigest {
		t.Fatalf("the caller's own: %q %+v %v", g, asked, err)
	}
	if st, err := desk.Status(ctx, r.ID, agent, time.Now()); err != nil || st != pending.StatusApproved {
		t.Errorf("status %q %v", st, err)
	}
}

func isOutcome(err error, o approval.Outcome) bool {
	var r *approval.Refusal
	return errors.As(err, &r) && r.Outcome == o
}

func TestGarmdRefusesAnApprovalsBucketThatAllowsPurgeOrRollUpsAndPrintsTheFix(t *testing.T) {
	_, js := garmtooltest.ConnectJetStream(t, garmtooltest.StartJetStream(t).URL())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// The bucket as nats kv add makes it: per-key TTLs, but roll-ups and
	// purges allowed, so one publish with a roll-up header on a key garmd
	// may write would empty it.
	if _, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: pending.Bucket, Storage: jetstream.FileStorage, LimitMarkerTTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	desk, err := approval.Open(ctx, js, "https://approvals.example")
	if err == nil || desk != nil {
		t.Fatal("garmd bound an approvals bucket that allows purges and roll-ups")
	}
	for _, want := range []string{"allows roll-ups", "allows purging", pending.FenceCommand()} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q: %v", want, err)
		}
	}
	if err := pending.Fence(ctx, js); err != nil {
		t.Fatal(err)
	}
	if _, err := approval.Open(ctx, js, "https://approvals.example"); err != nil {
		t.Errorf("garmd refused the fenced bucket: %v", err)
	}
}
