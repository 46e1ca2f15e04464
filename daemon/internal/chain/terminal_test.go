package chain_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/garm-dev/garm/approvals/pending"
	"github.com/garm-dev/garm/daemon/internal/approval"
	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/catalogue/cataloguetest"
	"github.com/garm-dev/garm/daemon/internal/chain"
	"github.com/garm-dev/garm/daemon/internal/chain/grant"
	"github.com/garm-dev/garm/daemon/internal/deny"
	"github.com/garm-dev/garm/daemon/internal/keyset/keysettest"
	replaymemory "github.com/garm-dev/garm/daemon/internal/replay/memory"
	"github.com/garm-dev/garm/daemon/internal/transport"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

// noRowCodes are the codes the plane answers before the chain runs, with
// no row: the ledger records calls that arrived whole (toolplane's doc).
var noRowCodes = map[deny.Code]string{
	deny.BodyTooLarge: "a body over the limit never arrived whole",
	deny.BodyTimeout:  "a body that did not arrive in time never arrived whole",
	deny.ShuttingDown: "a body cut at shutdown never arrived whole",
}

// Every terminal path writes exactly one row: a table with a case for
// every code of the denial taxonomy (deny.Codes), panics included. A code
// added to deny without a case here, or a place in noRowCodes, fails it.
func TestEveryTerminalPathWritesExactlyOneLedgerRow(t *testing.T) {
	r := newGovernedRig(t)
	js := limitGoverned(t, r, limitRate("calc.v1.divide", "once", 1, toolv1.Limit_KEY_PART_SUBJECT), limitRate("calc.v1.summarize", "many", 1000, toolv1.Limit_KEY_PART_TOOL))
	token, payer := r.token(t), r.payerToken(t)
	add := func() *chain.Request { return r.request(token, "/calc.v1.Calculator/Add", `{"a":1,"b":2}`) }
	answer := func(context.Context, *transport.Request) (*transport.Reply, error) {
		return &transport.Reply{Body: []byte{0x09, 0, 0, 0, 0, 0, 0, 0x08, 0x40}}, nil
	}
	replying := func(reply transport.Func) func() { return func() { r.reply = reply } }
	type terminal struct {
		name  string
		setup func()
		req   func() *chain.Request
		// status, outcome and kind are the answer's and the row's.
		status        int
		outcome, kind string
	}
	cases := map[deny.Code][]terminal{
		deny.Internal: {
			{"a panic in the transport", replying(func(context.Context, *transport.Request) (*transport.Reply, error) { panic("the transport blew up") }), add, 500, "error", "panic"},
			{"a reply that does not decode", replying(func(context.Context, *transport.Request) (*transport.Reply, error) {
				return &transport.Reply{Body: []byte{0xff}}, nil
			}), add, 500, "error", "bad_reply"},
		},
		deny.MethodNotAllowed: {{"not POST", nil, func() *chain.Request { return &chain.Request{HTTPMethod: "GET", Path: "/calc.v1.Calculator/Add"} }, 405, "denied", ""}},
		deny.NoCatalogue:      {{"no generation serving", func() { r.serving.Store(nil) }, add, 503, "error", "no_catalogue"}},
		deny.Unauthenticated:  {{"no token", nil, func() *chain.Request { return r.request("", "/calc.v1.Calculator/Add", `{}`) }, 401, "denied", ""}},
		deny.NotFound:         {{"an unknown route", nil, func() *chain.Request { return r.request(token, "/calc.v1.Calculator/Nope", `{}`) }, 404, "denied", ""}},
		deny.InvalidArgument: {
			{"a body that does not decode", nil, func() *chain.Request { return r.request(token, "/calc.v1.Calculator/Add", `{"a":"x"}`) }, 400, "denied", ""},
			{"a surface's argument fault", nil, func() *chain.Request { q := add(); q.ArgumentFault = "params twice"; return q }, 400, "denied", ""},
		},
		deny.PermissionDenied: {{"a grant that does not verify", nil, func() *chain.Request {
			q := r.request(payer, "/appr.v1.Payments/Pay", payment)
			q.Grant = "not.a.grant"
			return q
		}, 403, "denied", ""}},
		deny.GrantRequired:    {{"no grant", nil, func() *chain.Request { return r.request(payer, "/appr.v1.Payments/Pay", payment) }, 403, "denied", ""}},
		deny.AuditUnavailable: {{"no audit sink", nil, func() *chain.Request { return r.request(payer, "/appr.v1.Payments/Export", `{}`) }, 503, "error", "audit_unavailable"}},
		deny.ToolUnavailable: {{"no responders", replying(func(context.Context, *transport.Request) (*transport.Reply, error) {
			return nil, transport.ErrNoResponders
		}), add, 503, "error", "no_responders"}},
		deny.DeadlineExceeded: {{"a timeout", replying(func(context.Context, *transport.Request) (*transport.Reply, error) {
			return nil, transport.ErrTimeout
		}), add, 504, "error", "timeout"}},
		deny.ToolRefused: {{"a tool refusal", replying(func(context.Context, *transport.Request) (*transport.Reply, error) {
			return &transport.Reply{ErrorCode: "422", Error: "division by zero"}, nil
		}), func() *chain.Request {
			return r.request(token, "/calc.v1.Calculator/Divide", `{"dividend":1,"divisor":1}`)
		}, 422, "error", "tool_refused"}},
		deny.MalformedHeaders: {{"a header sent twice", nil, func() *chain.Request { q := add(); q.HeaderFault = "Authorization was sent more than once"; return q }, 400, "denied", ""}},
		deny.Overloaded:       {{"shed", nil, func() *chain.Request { q := add(); q.Overloaded = true; return q }, 503, "error", "overloaded"}},
		deny.ApprovalRefused: {
			{"an approval id with approvals that cannot find it", nil, func() *chain.Request {
				q := r.request(payer, "/appr.v1.Payments/Pay", payment)
				q.Approval = "not-an-id"
				return q
			}, 403, "denied", ""},
			{"a surface's approval token that did not open", nil, func() *chain.Request { q := add(); q.ApprovalFault = "tampered"; return q }, 403, "denied", ""},
			{"a surface's approval token of another caller", nil, func() *chain.Request {
				q := add()
				q.ApprovalHolder = &chain.Holder{Subject: "user:someone-else"}
				return q
			}, 403, "denied", ""},
		},
		deny.RateLimited: {{"over its tool's limit", func() {
			r.chain.Run(context.Background(), r.request(token, "/calc.v1.Calculator/Divide", `{"dividend":1,"divisor":1}`))
			r.recorder.Reset()
		}, func() *chain.Request {
			return r.request(token, "/calc.v1.Calculator/Divide", `{"dividend":1,"divisor":1}`)
		}, 429, "denied", ""}},
		deny.LimitUnavailable: {{"a counter that does not answer", func() { r.chain.Limits = unreachableLimiter(t, js) }, func() *chain.Request {
			return r.request(token, "/calc.v1.Calculator/Summarize", `{"values":[1]}`)
		}, 503, "error", "limit_unavailable"}},
		deny.ApprovalNotFound: {{"the status of no request", nil, func() *chain.Request {
			return &chain.Request{HTTPMethod: "GET", Path: chain.ApprovalsPath + "nope", Authorization: "Bearer " + token}
		}, 404, "denied", ""}},
	}
	gen := r.serving.Load()
	for _, code := range deny.Codes() {
		if reason, ok := noRowCodes[code]; ok {
			if len(cases[code]) > 0 {
				t.Errorf("%s has cases and is said to write no row: %s", code.Name(), reason)
			}
			continue
		}
		if len(cases[code]) == 0 {
			t.Errorf("no terminal path ends with %s: add its case", code.Name())
		}
		for _, c := range cases[code] {
			r.recorder.Reset()
			r.serving.Store(gen)
			r.reply = answer
			if c.setup != nil {
				c.setup()
			}
			resp := r.chain.Run(context.Background(), c.req())
			rows := r.recorder.Rows()
			if len(rows) != 1 {
				t.Errorf("%s, %s: %d rows", code.Name(), c.name, len(rows))
				continue
			}
			row := rows[0]
			if resp.Status != c.status || row.GetOutcome() != c.outcome || row.GetErrorKind() != c.kind || row.GetEventId() != resp.EventID {
				t.Errorf("%s, %s: status %d row %v", code.Name(), c.name, resp.Status, row)
			}
			// The static message says which code ended the call: two codes
			// can share a status and a spelling, never a message.
			var body struct{ Message string }
			if err := json.Unmarshal(resp.Body, &body); err != nil || (code != deny.ToolRefused && body.Message != code.Message()) {
				t.Errorf("%s, %s: answered %s", code.Name(), c.name, resp.Body)
			}
			if resp.Code != deny.WireCode(errorOf(code)) {
				t.Errorf("%s, %s: the answer's code is %q", code.Name(), c.name, resp.Code)
			}
			if strings.Contains(string(resp.Body), "blew up") {
				t.Errorf("%s, %s: the panic reached the caller", code.Name(), c.name)
			}
		}
	}
	// The ok path writes its row too.
	r.recorder.Reset()
	r.reply = answer
	if resp := r.chain.Run(context.Background(), add()); resp.Status != http.StatusOK || resp.Code != "" || len(r.recorder.Rows()) != 1 || r.recorder.Rows()[0].GetOutcome() != "ok" {
		t.Errorf("ok: %d %q %v", resp.Status, resp.Code, r.recorder.Rows())
	}
}

// errorOf is a refusal or failure with code, for its wire spelling.
func errorOf(code deny.Code) error {
	if code == deny.ToolRefused {
		return deny.Refuse("422", "")
	}
	return deny.Deny(code, "")
}

// payment is a PayRequest of the approvals fixture.
const payment = `{"amountMinorUnits": "125000", "currencyCode": "GBP", "beneficiaryIban": "GB29NWBK60161331926819", "memo": "invoice 7"}`

// newGovernedRig is a rig whose catalogue adds the approvals fixture, with
// grants and approvals on and no audit sink: every code has a path.
func newGovernedRig(tb testing.TB) *rig {
	tb.Helper()
	r := newRig(tb)
	gen, err := catalogue.Load(cataloguetest.Build(tb, "../../../examples/calculator/proto", "../../testdata/approvals/proto"), catalogue.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	retention := time.Duration(0)
	if err := catalogue.Mount(gen, catalogue.Steps{Grants: true, Notify: true, AuditRetention: &retention}); err != nil {
		tb.Fatal(err)
	}
	r.serving.Store(gen)
	grantKeys := keysettest.NewServer(tb, keysettest.NewKey(tb, "ES256", "g1"))
	r.chain.Grants, err = grant.New(grant.Config{Issuer: "https://grants.chain.test", JWKSURL: grantKeys.URL, Audience: "garm", Spender: replaymemory.New()})
	if err != nil {
		tb.Fatal(err)
	}
	if r.chain.Approvals, err = approval.New(emptyStore{}, "https://approvals.chain.test"); err != nil {
		tb.Fatal(err)
	}
	return r
}

// payerToken is a CONFIDENTIAL caller's who may pay and read.
func (r *rig) payerToken(tb testing.TB) string {
	tb.Helper()
	claims, _ := json.Marshal(map[string]any{
		"iss": issuer, "sub": "user:payer", "aud": "garm", "exp": time.Now().Add(time.Hour).Unix(),
		"garm": map[string]any{"clearance": "CONFIDENTIAL", "verbs": []string{"READ", "DESTRUCTIVE"}},
	})
	return r.key.Sign(tb, claims)
}

// emptyStore is a pending-request bucket that holds nothing and records
// nothing.
type emptyStore struct{}

func (emptyStore) Ask(context.Context, pending.Request) (pending.Request, error) {
	return pending.Request{}, fmt.Errorf("%w: this store records nothing", pending.ErrInvalid)
}

func (emptyStore) Collected(context.Context, pending.Request) error { return nil }

func (emptyStore) Recall(context.Context, pending.Request) (pending.Request, *pending.Decision, error) {
	return pending.Request{}, nil, pending.ErrNotFound
}

func (emptyStore) Get(context.Context, string) (pending.Request, *pending.Decision, error) {
	return pending.Request{}, nil, pending.ErrNotFound
}

func (emptyStore) Lookup(context.Context, string) (pending.Request, *pending.Decision, error) {
	return pending.Request{}, nil, pending.ErrNotFound
}
