package chain_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/chain"
	"github.com/garm-dev/garm/daemon/internal/chain/dispatch"
	"github.com/garm-dev/garm/daemon/internal/chain/limit"
	"github.com/garm-dev/garm/daemon/internal/transport"
	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

func divide(r *rig, token string) *chain.Request {
	return r.request(token, "/calc.v1.Calculator/Divide", `{"dividend":1,"divisor":1}`)
}

var quotient = func(context.Context, *transport.Request) (*transport.Reply, error) {
	return &transport.Reply{Body: []byte{0x09, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f}}, nil
}

// A limited tool admits its count, then answers 429 rate_limited naming the
// limit, with when to retry, and the row names the limit and its key's
// parts — never their values.
func TestALimitedToolAdmitsItsCountThenRefusesNamingTheLimit(t *testing.T) {
	r := newGovernedRig(t)
	limitGoverned(t, r, limitRate("calc.v1.divide", "divides", 2, toolv1.Limit_KEY_PART_TENANT, toolv1.Limit_KEY_PART_SUBJECT))
	r.reply = quotient
	token := r.token(t)
	for i := range 2 {
		if resp := r.chain.Run(context.Background(), divide(r, token)); resp.Status != http.StatusOK {
			t.Fatalf("call %d: %d %s", i, resp.Status, resp.Body)
		}
	}
	r.recorder.Reset()
	resp := r.chain.Run(context.Background(), divide(r, token))
	if resp.Status != http.StatusTooManyRequests || resp.Code != "rate_limited" || resp.Limit == nil || resp.Limit.Count != 2 || resp.Limit.RetryAfterSeconds() < 1 {
		t.Fatalf("over the limit: %d %q %+v", resp.Status, resp.Code, resp.Limit)
	}
	var body struct {
		Code, Limit       string
		RetryAfterSeconds int64 `json:"retry_after_seconds"`
	}
	if err := json.Unmarshal(resp.Body, &body); err != nil || body.Limit != "divides" || body.RetryAfterSeconds != resp.Limit.RetryAfterSeconds() {
		t.Fatalf("body %s", resp.Body)
	}
	row := r.recorder.Rows()[0]
	if row.GetLimitId() != "divides" || row.GetLimitKey() != "tenant+subject" || row.GetOutcome() != "denied" {
		t.Fatalf("row: limit %q key %q outcome %q", row.GetLimitId(), row.GetLimitKey(), row.GetOutcome())
	}
	if strings.Contains(row.GetErrorDetail(), "user:t") {
		t.Fatalf("the row's detail holds a key's value: %s", row.GetErrorDetail())
	}
	// A caller of another subject has a count of its own.
	if resp := r.chain.Run(context.Background(), divide(r, r.payerToken(t))); resp.Status != http.StatusOK {
		t.Fatalf("another subject: %d %s", resp.Status, resp.Body)
	}
}

// Every refusal after the call was counted and before it was dispatched
// gives the count back: with a limit of one, the same refused call made
// again meets the same refusal, never rate_limited. A call that reached the
// tool keeps its count, whatever the tool answered.
func TestARefusalAfterCountingGivesTheCountBack(t *testing.T) {
	cases := []struct {
		name, tool, path, body, code string
		payer                        bool
		grant                        string
		reply                        transport.Func
		away                         bool
		status                       int
	}{
		{name: "the bus is away", tool: "calc.v1.divide", path: "/calc.v1.Calculator/Divide", body: `{"dividend":1,"divisor":1}`, away: true, status: 503, code: "unavailable"},
		{name: "grant required", tool: "appr.v1.pay", path: "/appr.v1.Payments/Pay", body: payment, payer: true, status: 403, code: "grant_required"},
		{name: "a grant that does not verify", tool: "appr.v1.pay", path: "/appr.v1.Payments/Pay", body: payment, payer: true, grant: "not.a.grant", status: 403, code: "permission_denied"},
		{name: "the audit write-ahead failed", tool: "appr.v1.export", path: "/appr.v1.Payments/Export", body: `{}`, payer: true, status: 503, code: "unavailable"},
		{name: "dispatched, then a panic: the count is kept", tool: "calc.v1.divide", path: "/calc.v1.Calculator/Divide", body: `{"dividend":1,"divisor":1}`,
			reply: func(context.Context, *transport.Request) (*transport.Reply, error) { panic("blew up") }, status: 500, code: "internal"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newGovernedRig(t)
			limitGoverned(t, r, limitRate(c.tool, "once", 1, toolv1.Limit_KEY_PART_SUBJECT))
			r.reply = c.reply
			if c.away {
				r.chain.Dispatch = dispatch.New(awayBus{})
			}
			token := r.token(t)
			if c.payer {
				token = r.payerToken(t)
			}
			for i := range 3 {
				q := r.request(token, c.path, c.body)
				q.Grant = c.grant
				resp := r.chain.Run(context.Background(), q)
				wantStatus, wantCode := c.status, c.code
				if c.reply != nil && i > 0 {
					// Dispatched: the count was the tool's to keep.
					wantStatus, wantCode = 429, "rate_limited"
				}
				if resp.Status != wantStatus || resp.Code != wantCode {
					t.Fatalf("call %d: %d %q, want %d %q", i, resp.Status, resp.Code, wantStatus, wantCode)
				}
			}
		})
	}
}

// A call refused by a limit spends no grant and opens no approval request:
// the limit is judged before step 5 looks at either.
func TestALimitRefusalSpendsNoGrantAndOpensNoApprovalRequest(t *testing.T) {
	r := newGovernedRig(t)
	limitGoverned(t, r, limitRate("appr.v1.pay", "once", 1, toolv1.Limit_KEY_PART_SUBJECT),
		limitRate("appr.v1.export", "once", 1, toolv1.Limit_KEY_PART_SUBJECT))
	payer := r.payerToken(t)
	// Export is counted and refused by its audit write-ahead, then given
	// back; a limit on pay is spent by a call the test makes with no grant,
	// refused at step 5 and given back, so the counter stands at 0: spend
	// it with a limiter call of the payer's own.
	r.chain.Run(context.Background(), r.request(payer, "/appr.v1.Payments/Pay", payment))
	rows := r.recorder.Rows()
	p := principalOf(rows[len(rows)-1])
	gen := r.serving.Load()
	if _, err := r.chain.Limits.Admit(context.Background(), gen.Limits().Of(gen.Route("/appr.v1.Payments/Pay")), p, new(limitTicket)); err != nil {
		t.Fatal(err)
	}
	q := r.request(payer, "/appr.v1.Payments/Pay", payment)
	q.Grant = "not.a.grant"
	resp := r.chain.Run(context.Background(), q)
	if resp.Status != http.StatusTooManyRequests || resp.Approval != nil {
		t.Fatalf("over the limit with a grant: %d %s, approval %v", resp.Status, resp.Body, resp.Approval)
	}
	// Without the limit, the same call is judged by step 5: the grant
	// does not verify. Over it, step 5 never looked.
	if row := r.recorder.Rows()[len(r.recorder.Rows())-1]; row.GetLimitId() != "once" {
		t.Fatalf("the row names no limit: %v", row)
	}
}

type limitTicket = limit.Ticket

// awayBus is a transport whose bus is not connected.
type awayBus struct{}

func (awayBus) Request(context.Context, *transport.Request) (*transport.Reply, error) {
	return nil, transport.ErrNotConnected
}
func (awayBus) Connected() error { return transport.ErrNotConnected }

// principalOf is the caller a row records, as the limit step keys it.
func principalOf(row *ledgerv1.Event) *call.Principal {
	return &call.Principal{Tenant: row.GetTenant(), Subject: row.GetPrincipalSubject()}
}
