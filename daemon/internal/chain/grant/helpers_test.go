package grant_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/catalogue/cataloguetest"
	"github.com/garm-dev/garm/daemon/internal/chain/grant"
	"github.com/garm-dev/garm/daemon/internal/deny"
	"github.com/garm-dev/garm/daemon/internal/keyset/keysettest"
	"github.com/garm-dev/garm/daemon/internal/replay/memory"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/runtime/wire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

const (
	issuer   = "https://approvals.example"
	audience = "garm-grants.example"
	caller   = "user:ada"
	// bound is the most any one call of a test may take: it bounds the
	// test, it measures nothing.
	bound = 30 * time.Second

	initiatePayment = "grantfix.v1.initiate_payment"
	cancelPayment   = "grantfix.v1.cancel_payment"
	holdPayment     = "grantfix.v1.hold_payment"

	// paymentJSON is the request the fixture's grant approves: design 7.9's
	// reference values and a field that is not material.
	paymentJSON = `{"amountMinorUnits": "125000", "beneficiaryIban": "GB29NWBK60161331926819", "currencyCode": "GBP", "reference": "invoice 7"}`
	// referenceDigest is design 7.9's reference material digest of those
	// values.
	referenceDigest = "sha256:050767261c6a70af99c68e72344389981e728a40661ace42936a6d3d00ac9f71"
)

var epoch = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// catalogue is testdata/grantfix.proto, built and loaded as garmd loads a
// catalogue.
var catalogue = cataloguetest.NewFixture("testdata")

func tool(tb testing.TB, name string) *call.Tool { return catalogue.Tool(tb, name) }

// withApproval is a copy of t whose approval is changed by edit; the
// fixture's tool is shared and stays as it was.
func withApproval(t *call.Tool, edit func(*toolv1.ToolPolicy_Approval)) *call.Tool {
	cp := *t
	cp.Policy = proto.CloneOf(t.Policy)
	if cp.Policy.Approval == nil {
		cp.Policy.Approval = &toolv1.ToolPolicy_Approval{}
	}
	edit(cp.Policy.Approval)
	return &cp
}

// fixture is a grant issuer with one key and its JWKS endpoint, a Verifier
// trusting it on a clock the test moves, and an in-memory spent bucket.
type fixture struct {
	clock   *keysettest.Clock
	key     *keysettest.Key
	jwks    *keysettest.Server
	spent   *memory.Spender
	v       *grant.Verifier
	pay     *call.Tool
	payment protoreflect.Message
	who     *call.Principal
	// calls numbers the calls that spend, each its own event id.
	calls atomic.Int64
}

func newFixture(tb testing.TB) *fixture {
	tb.Helper()
	f := &fixture{
		clock: keysettest.NewClock(epoch),
		key:   keysettest.NewKey(tb, "ES256", "grants-1"),
		spent: memory.New(),
		pay:   tool(tb, "initiate_payment"),
		who:   &call.Principal{Subject: caller, Clearance: toolv1.Clearance_CLEARANCE_INTERNAL},
	}
	f.jwks = keysettest.NewServer(tb, f.key)
	f.payment = cataloguetest.Message(tb, f.pay.Input, paymentJSON)
	v, err := grant.New(grant.Config{
		Issuer:   issuer,
		JWKSURL:  f.jwks.URL,
		Audience: audience,
		Spender:  f.spent,
		Now:      f.clock.Now,
	})
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	f.v = v
	return f
}

// claims is a good grant for the fixture's payment: issued ten seconds
// ago, approved by a confidential approver holding both compartments.
func (f *fixture) claims() map[string]any {
	now := f.clock.Now().Unix()
	return map[string]any{
		"iss": issuer, "aud": audience, "jti": "grant-1", "iat": now - 10, "exp": now + 300,
		"garm_grant": map[string]any{
			"tool": initiatePayment, "subject": caller, "task": "TASK-42",
			"material":              referenceDigest,
			"approver":              "user:bob",
			"approver_clearance":    "CONFIDENTIAL",
			"approver_compartments": []any{"treasury", "payments-ops"},
		},
	}
}

// sign is claims signed by the issuer's key under its honest header.
func (f *fixture) sign(tb testing.TB, claims map[string]any) string {
	tb.Helper()
	return f.key.Sign(tb, encode(tb, claims))
}

func encode(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// check is step 5 for the fixture's payment: the checks, then the spend.
func (f *fixture) check(tb testing.TB, g string) (grant.Result, error) {
	tb.Helper()
	return f.checkCall(tb, g, f.pay, f.payment)
}

func (f *fixture) checkCall(tb testing.TB, g string, t *call.Tool, req protoreflect.Message) (grant.Result, error) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	res, err := f.v.Check(ctx, g, f.who, t, req)
	if err != nil {
		return res, err
	}
	if err := f.v.Spend(ctx, res, fmt.Sprint("call-", f.calls.Add(1))); err != nil {
		// As the chain sees it: a grant refused at the spend names no jti
		// to the tool, only its task to the ledger.
		return grant.Result{TaskID: res.TaskID}, err
	}
	return res, nil
}

// accept asserts that g is accepted for the payment and spent.
func (f *fixture) accept(tb testing.TB, g string) grant.Result {
	tb.Helper()
	res, err := f.check(tb, g)
	if err != nil {
		tb.Fatalf("a good grant was refused: %v", err)
	}
	return res
}

// wantDenied asserts err is a *deny.Denied with code and returns it.
func wantDenied(tb testing.TB, err error, code deny.Code) *deny.Denied {
	tb.Helper()
	var d *deny.Denied
	if !errors.As(err, &d) || d.Code != code {
		tb.Fatalf("refused with %v, want a %s refusal", err, code)
	}
	return d
}

// set is a copy of m with path (dot-separated) set to v, or removed when v
// is remove.
func set(m map[string]any, path string, v any) map[string]any {
	out := deepCopy(m).(map[string]any)
	at := out
	for {
		name, rest, more := cutDot(path)
		if !more {
			if _, ok := v.(removal); ok {
				delete(at, name)
			} else {
				at[name] = v
			}
			return out
		}
		at = at[name].(map[string]any)
		path = rest
	}
}

type removal struct{}

var remove = removal{}

func cutDot(s string) (string, string, bool) {
	for i := range len(s) {
		if s[i] == '.' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = deepCopy(e)
		}
		return s
	}
	return v
}

// material is the digest of a payment of these values.
func material(amount, iban, currency string) string {
	return wire.MaterialDigest(map[string]string{
		"amount_minor_units": amount, "beneficiary_iban": iban, "currency_code": currency,
	})
}
