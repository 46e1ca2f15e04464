package approvals_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/garm-dev/garm/approvals"
	"github.com/garm-dev/garm/approvals/pending"
	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"
)

// auditRows reads every row on GARM_AUDIT.
func auditRows(t *testing.T, p *plane) []*ledgerv1.Event {
	t.Helper()
	ctx := bounded(t)
	c, err := p.js.OrderedConsumer(ctx, wire.AuditStream, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	info, err := p.js.Stream(ctx, wire.AuditStream)
	if err != nil {
		t.Fatal(err)
	}
	n := info.CachedInfo().State.Msgs
	var rows []*ledgerv1.Event
	for uint64(len(rows)) < n {
		msg, err := c.Next(jetstream.FetchMaxWait(5 * time.Second))
		if err != nil {
			t.Fatal(err)
		}
		var e ledgerv1.Event
		if err := proto.Unmarshal(msg.Data(), &e); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, &e)
	}
	return rows
}

// verifyGrant checks the grant's signature against the service's key set and answers its
// payload.
func verifyGrant(t *testing.T, p *plane, grant string) map[string]any {
	t.Helper()
	set, err := jwk.Parse(p.svc.JWKS())
	if err != nil {
		t.Fatal(err)
	}
	payload, err := jws.Verify([]byte(grant), jws.WithKeySet(set, jws.WithRequireKid(true)))
	if err != nil {
		t.Fatalf("the grant does not verify with the service's key set: %v", err)
	}
	var claims map[string]any
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	return claims
}

func TestAnApproverApprovesAndTheGrantBindsExactlyTheRequest(t *testing.T) {
	p := startPlane(t)
	r := p.ask(t, treasurer, []string{payerAgent}, "125000")
	b := p.signIn(t, "approver")

	inbox := b.get(p.base + "/")
	if inbox.status != http.StatusOK || !strings.Contains(inbox.body, r.ID) {
		t.Fatalf("the inbox does not list the request: %d\n%s", inbox.status, inbox.body)
	}
	pg := b.get(p.svc.RequestURL(r.ID))
	for _, want := range []string{"Send a payment", "125000", "GBP", "GB29NWBK60161331926819", "A-10001", treasurer, payerAgent, "The approver confirms"} {
		if !strings.Contains(pg.body, want) {
			t.Errorf("the request page does not show %q", want)
		}
	}
	if got := b.post(p.svc.RequestURL(r.ID)+"/approve", url.Values{"csrf": {csrfOf(t, pg.body)}}); got.status != http.StatusOK || !strings.Contains(got.body, "approved by") {
		t.Fatalf("approve: %d\n%s", got.status, got.body)
	}
	_, d, err := p.store.Get(bounded(t), r.ID)
	if err != nil || d == nil || d.Verdict != pending.Approved || d.Approver != "user:adam@acme-bank.example" {
		t.Fatalf("decision: %+v %v", d, err)
	}
	claims := verifyGrant(t, p, d.Grant)
	g := claims["garm_grant"].(map[string]any)
	if claims["iss"] != p.base || claims["aud"] != grantAudience || claims["act"] != nil || claims["sub"] != nil {
		t.Errorf("registered claims: %v", claims)
	}
	if exp, iat := claims["exp"].(float64), claims["iat"].(float64); exp-iat != 300 {
		t.Errorf("the grant lives %v s, want the tool's max grant age", exp-iat)
	}
	want := map[string]any{
		"tool": paymentTool, "subject": treasurer, "tenant": "acme-bank", "act": []any{payerAgent},
		"material": wire.MaterialDigest(r.Material), "approver": "user:adam@acme-bank.example", "approver_clearance": "CLEARANCE_RESTRICTED",
		"approver_compartments": []any{"financial"},
	}
	if gj, wj := mustJSON(t, g), mustJSON(t, want); gj != wj {
		t.Errorf("garm_grant:\n%s\nwant\n%s", gj, wj)
	}

	rows := auditRows(t, p)
	if len(rows) != 1 {
		t.Fatalf("%d audit rows, want 1", len(rows))
	}
	row := rows[0]
	if row.GetOutcome() != "approved" || row.GetPrincipalSubject() != "user:adam@acme-bank.example" || row.GetTool() != paymentTool ||
		row.GetCorrelationId() != r.ID || row.GetCausationId() != r.EventID || row.GetApp() != approvals.AuditApp || row.GetTime() == nil {
		t.Errorf("audit row: %v", row)
	}
	if strings.Contains(row.String(), d.Grant) {
		t.Error("the audit row carries the grant")
	}

	// A second decision on the same request is refused and changes nothing.
	again := b.post(p.svc.RequestURL(r.ID)+"/deny", url.Values{"csrf": {csrfOf(t, pg.body)}})
	if again.status != http.StatusConflict {
		t.Errorf("a second decision: %d, want 409", again.status)
	}
	if _, d2, _ := p.store.Get(bounded(t), r.ID); d2 == nil || d2.Verdict != pending.Approved {
		t.Errorf("the second decision changed the first: %+v", d2)
	}
	if n := len(auditRows(t, p)); n != 1 {
		t.Errorf("%d audit rows after a refused second decision, want 1", n)
	}
}

func TestADenyIsStoredWithoutAGrantAndAudited(t *testing.T) {
	p := startPlane(t)
	r := p.ask(t, treasurer, nil, "990000")
	b := p.signIn(t, "approver")
	pg := b.get(p.svc.RequestURL(r.ID))
	if got := b.post(p.svc.RequestURL(r.ID)+"/deny", url.Values{"csrf": {csrfOf(t, pg.body)}}); got.status != http.StatusOK || !strings.Contains(got.body, "denied by") {
		t.Fatalf("deny: %d\n%s", got.status, got.body)
	}
	_, d, err := p.store.Get(bounded(t), r.ID)
	if err != nil || d == nil || d.Verdict != pending.Denied || d.Grant != "" {
		t.Fatalf("decision: %+v %v", d, err)
	}
	if rows := auditRows(t, p); len(rows) != 1 || rows[0].GetOutcome() != "denied" {
		t.Fatalf("audit rows: %v", rows)
	}
	if inbox := b.get(p.base + "/"); strings.Contains(inbox.body, r.ID) {
		t.Error("a decided request is still in the inbox")
	}
}

func TestWithoutTheAuditStreamNothingIsDecided(t *testing.T) {
	p := startPlane(t)
	r := p.ask(t, treasurer, nil, "125000")
	b := p.signIn(t, "approver")
	pg := b.get(p.svc.RequestURL(r.ID))
	if err := p.js.DeleteStream(bounded(t), wire.AuditStream); err != nil {
		t.Fatal(err)
	}
	got := b.post(p.svc.RequestURL(r.ID)+"/approve", url.Values{"csrf": {csrfOf(t, pg.body)}})
	if got.status != http.StatusServiceUnavailable {
		t.Fatalf("approve without an audit stream: %d, want 503", got.status)
	}
	if _, d, err := p.store.Get(bounded(t), r.ID); err != nil || d != nil {
		t.Fatalf("a decision was stored without its audit row: %+v %v", d, err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
