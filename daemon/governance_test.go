package garmd_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	garmd "github.com/garm-dev/garm/daemon"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

const (
	grantRequiredBody = `{"code":"grant_required","distinct_approver":true,"material_fields":["amount_minor_units","currency_code","beneficiary_iban"],` +
		`"max_grant_age_seconds":300,"message":"This call needs a human's approval grant.","tool":"appr.v1.pay"}`
	permissionDeniedBody = `{"code":"permission_denied","message":"The caller may not make this request."}`
)

func TestAPaymentWithoutAGrantIsToldWhatToAskFor(t *testing.T) {
	t.Parallel()
	s := startGovernedStack(t)
	ans := s.post(payPath, s.token("payer"), payment)
	if ans.status != http.StatusForbidden || string(ans.body) != grantRequiredBody {
		t.Fatalf("%d %s", ans.status, ans.body)
	}
	assertRowOutcome(t, s.row(ans.eventID()), "denied", "appr.v1.pay")
	if n := s.payments.paid.Load(); n != 0 {
		t.Fatalf("the tool was reached %d times", n)
	}
	// The audit stream has the outcome and no intent: refused before the
	// tool was reached.
	rows := auditRowsOf(s, ans.eventID())
	if len(rows) != 1 || rows[0].event.GetOutcome() != "denied" || rows[0].msgID != ans.eventID()+".denied" {
		t.Fatalf("audit rows %v", rows)
	}
}

func TestAnApprovedPaymentSucceedsOnceAndItsReplayIsRefused(t *testing.T) {
	t.Parallel()
	s := startGovernedStack(t)
	g := s.grant("approver", "appr.v1.pay", payer, paymentMaterial, "TASK-7")
	ans := s.post(payPath, s.token("payer"), payment, "Garm-Grant", g)
	if ans.status != http.StatusOK || string(ans.body) != `{"payment_id":"pay-1","sent":1}` {
		t.Fatalf("%d %s", ans.status, ans.body)
	}
	row := s.row(ans.eventID())
	if row.GetOutcome() != "ok" || row.GetTags()["task_id"] != "TASK-7" {
		t.Fatalf("row outcome %q tags %v", row.GetOutcome(), row.GetTags())
	}
	if got, want := s.payments.grantJTI.Load(), grantID(t, g); got != want || want == "" {
		t.Fatalf("the tool was told grant_jti %q, want the grant's jti %q", got, want)
	}
	audit := auditRowsOf(s, ans.eventID())
	if len(audit) != 2 || audit[0].msgID != ans.eventID()+".intent" || audit[1].msgID != ans.eventID()+".ok" ||
		audit[0].subject != "garm.v1.audit.acme.garmd" {
		t.Fatalf("audit rows %v", audit)
	}

	replay := s.post(payPath, s.token("payer"), payment, "Garm-Grant", g)
	if replay.status != http.StatusForbidden || string(replay.body) != permissionDeniedBody {
		t.Fatalf("the replay: %d %s", replay.status, replay.body)
	}
	row = s.row(replay.eventID())
	if row.GetOutcome() != "denied" || row.GetTags()["task_id"] != "TASK-7" || !strings.Contains(row.GetErrorDetail(), "spent") {
		t.Fatalf("replay row: %q %v %q", row.GetOutcome(), row.GetTags(), row.GetErrorDetail())
	}
	if n := s.payments.paid.Load(); n != 1 {
		t.Fatalf("the tool paid %d times", n)
	}
}

func TestARefusedGrantIsNotSpent(t *testing.T) {
	t.Parallel()
	s := startGovernedStack(t)
	g := s.grant("approver", "appr.v1.pay", payer, paymentMaterial, "")
	cases := []struct{ name, persona, body, grant string }{
		{"another amount than approved", "payer", strings.Replace(payment, "125000", "999999", 1), g},
		{"another beneficiary than approved", "payer", strings.Replace(payment, "GB29NWBK60161331926819", "GB00ATTACKER0000000000", 1), g},
		{"another caller than approved", "clerk", payment, g},
		{"an approver below the floor", "payer", payment, s.grant("junior", "appr.v1.pay", payer, paymentMaterial, "")},
		{"an approver without the compartment", "payer", payment, s.grant("auditor", "appr.v1.pay", payer, paymentMaterial, "")},
		{"a grant for another tool", "payer", payment, s.grant("approver", "appr.v1.export", payer, paymentMaterial, "")},
		{"a grant that is not a JWS", "payer", payment, "not.a.grant"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ans := s.post(payPath, s.token(tc.persona), tc.body, "Garm-Grant", tc.grant)
			if ans.status != http.StatusForbidden || string(ans.body) != permissionDeniedBody {
				t.Fatalf("%d %s", ans.status, ans.body)
			}
			assertRowOutcome(t, s.row(ans.eventID()), "denied", "appr.v1.pay")
		})
	}
	// The approved grant survived every attempt above.
	if ans := s.post(payPath, s.token("payer"), payment, "Garm-Grant", g); ans.status != http.StatusOK {
		t.Fatalf("the approved grant after the attacks: %d %s", ans.status, ans.body)
	}
	if n := s.payments.paid.Load(); n != 1 {
		t.Fatalf("the tool paid %d times", n)
	}
}

func TestTwoReplicasSpendOneGrantExactlyOnce(t *testing.T) {
	t.Parallel()
	s := startGovernedStack(t)
	replica := s.startReplica()
	g := s.grant("approver", "appr.v1.pay", payer, paymentMaterial, "")
	token := s.token("payer")
	const perReplica = 50
	var wg sync.WaitGroup
	answers := make(chan *answer, 2*perReplica)
	for _, base := range []string{s.url, replica} {
		for range perReplica {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, _ := http.NewRequest(http.MethodPost, base+payPath, strings.NewReader(payment))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+token)
				req.Header.Set("Garm-Grant", g)
				resp, err := s.client.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				defer resp.Body.Close()
				var body bytes.Buffer
				_, _ = body.ReadFrom(resp.Body)
				answers <- &answer{status: resp.StatusCode, header: resp.Header, body: body.Bytes()}
			}()
		}
	}
	wg.Wait()
	close(answers)
	ok, refused := 0, 0
	var ids []string
	for a := range answers {
		switch a.status {
		case http.StatusOK:
			ok++
		case http.StatusForbidden:
			refused++
		default:
			t.Errorf("an attempt answered %d %s", a.status, a.body)
		}
		ids = append(ids, a.eventID())
	}
	if ok != 1 || refused != 2*perReplica-1 {
		t.Fatalf("%d succeeded and %d were refused, want 1 and %d", ok, refused, 2*perReplica-1)
	}
	for _, id := range ids {
		s.row(id)
	}
	if n := s.payments.paid.Load(); n != 1 {
		t.Fatalf("the tool paid %d times", n)
	}
}

func TestAFailClosedToolIsNotCalledWhileTheAuditStreamIsDown(t *testing.T) {
	t.Parallel()
	s := startGovernedStack(t)
	js := s.jetstream()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if err := js.DeleteStream(ctx, "GARM_AUDIT"); err != nil {
		t.Fatal(err)
	}
	ans := s.post(exportPath, s.token("payer"), `{}`)
	if ans.status != http.StatusServiceUnavailable ||
		string(ans.body) != `{"code":"unavailable","message":"The call could not be recorded before it ran, so it was not made."}` {
		t.Fatalf("%d %s", ans.status, ans.body)
	}
	if row := s.row(ans.eventID()); row.GetOutcome() != "error" || row.GetErrorKind() != "audit_unavailable" {
		t.Fatalf("row %q %q", row.GetOutcome(), row.GetErrorKind())
	}
	if n := s.payments.exported.Load(); n != 0 {
		t.Fatalf("the tool was reached %d times", n)
	}

	createAuditStream(t, js)
	ans = s.post(exportPath, s.token("payer"), `{}`)
	if ans.status != http.StatusOK || string(ans.body) != `{"served":1}` {
		t.Fatalf("with the stream back: %d %s", ans.status, ans.body)
	}
	rows := auditRowsOf(s, ans.eventID())
	if len(rows) != 2 || rows[0].event.GetOutcome() != "intent" || rows[1].event.GetOutcome() != "ok" {
		t.Fatalf("audit rows %v", rows)
	}
}

func TestNotifyToolsAreToldToAHumanAndAFailureChangesNothing(t *testing.T) {
	t.Parallel()
	s := startGovernedStack(t)
	ans := s.post(cancelPath, s.token("payer"), `{"payment_id": "pay-9"}`)
	if ans.status != http.StatusOK || string(ans.body) != `{"payment_id":"pay-9"}` {
		t.Fatalf("%d %s", ans.status, ans.body)
	}
	row := s.waitStreamRow("GARM_NOTIFY", ans.eventID())
	if row.subject != "garm.v1.notify.acme.appr.v1.cancel" || row.event.GetOutcome() != "ok" || row.event.GetTool() != "appr.v1.cancel" {
		t.Fatalf("notify row %s %v", row.subject, row.event)
	}

	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if err := s.jetstream().DeleteStream(ctx, "GARM_NOTIFY"); err != nil {
		t.Fatal(err)
	}
	again := s.post(cancelPath, s.token("payer"), `{"payment_id": "pay-9"}`)
	if again.status != http.StatusOK || !bytes.Equal(again.body, ans.body) {
		t.Fatalf("with notify failing: %d %s", again.status, again.body)
	}
	assertRowOutcome(t, s.row(again.eventID()), "ok", "appr.v1.cancel")
}

func TestAGrantCeilingBeyondTheSpentBucketsTTLDoesNotMount(t *testing.T) {
	t.Parallel()
	s := startGovernedStack(t)
	js := s.jetstream()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if err := js.DeleteKeyValue(ctx, "GARM_GRANTS_SPENT"); err != nil {
		t.Fatal(err)
	}
	recreate(t, func(ctx context.Context) error {
		if _, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "GARM_GRANTS_SPENT", TTL: 2 * time.Minute, Storage: jetstream.FileStorage}); err != nil {
			return err
		}
		return garmd.FenceGrantsBucket(ctx, js)
	})
	_, err := garmd.New(ctx, s.cfg)
	if err == nil || !strings.Contains(err.Error(), "tool appr.v1.pay declares approval MODE_GRANT with max_grant_age_seconds 300") ||
		!strings.Contains(err.Error(), "raise the bucket's TTL to at least 6m0s") {
		t.Fatalf("garmd started, or refused with %v", err)
	}
}

func TestGarmdRefusesAnAuditStreamThatDropsOldRows(t *testing.T) {
	t.Parallel()
	s := startGovernedStack(t)
	js := s.jetstream()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if err := js.DeleteStream(ctx, "GARM_AUDIT"); err != nil {
		t.Fatal(err)
	}
	recreate(t, func(ctx context.Context) error {
		_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "GARM_AUDIT", Subjects: []string{"garm.v1.audit.>"}, Storage: jetstream.FileStorage, Discard: jetstream.DiscardOld})
		return err
	})
	_, err := garmd.New(ctx, s.cfg)
	if err == nil || !strings.Contains(err.Error(), "--audit-stream-retention") || !strings.Contains(err.Error(), "GARM_AUDIT") {
		t.Fatalf("garmd started, or refused with %v", err)
	}
}

// jetstream is a JetStream client on the stack's bus, closed with the test.
func (s *stack) jetstream() jetstream.JetStream {
	s.t.Helper()
	nc, err := nats.Connect(s.bus.url)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		s.t.Fatal(err)
	}
	return js
}

// auditRowsOf waits until the audit stream holds the outcome row of the call
// with eventID and returns every audit row of that call, in stream order.
func auditRowsOf(s *stack, eventID string) []streamRow {
	s.t.Helper()
	s.waitStreamRow("GARM_AUDIT", eventID)
	var out []streamRow
	for _, r := range s.streamRows("GARM_AUDIT") {
		if r.event.GetEventId() == eventID {
			out = append(out, r)
		}
	}
	return out
}

// waitStreamRow waits for a row of the call with eventID on stream (for the
// audit stream, its outcome: the last row a call writes there).
func (s *stack) waitStreamRow(stream, eventID string) streamRow {
	s.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for time.Now().Before(deadline) {
		for _, r := range s.streamRows(stream) {
			if r.event.GetEventId() == eventID && r.event.GetOutcome() != "intent" {
				return r
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.t.Fatalf("no row of %s on %s within %s", eventID, stream, waitTimeout)
	return streamRow{}
}

// grantID is the jti of a compact grant, read without verifying it.
func grantID(t *testing.T, grant string) string {
	t.Helper()
	parts := strings.Split(grant, ".")
	if len(parts) != 3 {
		t.Fatalf("the grant has %d parts", len(parts))
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims struct {
		JTI string `json:"jti"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	return claims.JTI
}
