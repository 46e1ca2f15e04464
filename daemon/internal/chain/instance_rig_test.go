package chain_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/garm-dev/garm/approvals/pending"
	"github.com/garm-dev/garm/daemon/internal/approval"
	auditmemory "github.com/garm-dev/garm/daemon/internal/audit/memory"
	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/catalogue/cataloguetest"
	"github.com/garm-dev/garm/daemon/internal/chain"
	"github.com/garm-dev/garm/daemon/internal/chain/authn"
	"github.com/garm-dev/garm/daemon/internal/chain/dispatch"
	"github.com/garm-dev/garm/daemon/internal/chain/grant"
	"github.com/garm-dev/garm/daemon/internal/chain/input"
	"github.com/garm-dev/garm/daemon/internal/chain/instance/instancetest"
	"github.com/garm-dev/garm/daemon/internal/chain/redact"
	"github.com/garm-dev/garm/daemon/internal/keyset/keysettest"
	"github.com/garm-dev/garm/daemon/internal/ledger"
	"github.com/garm-dev/garm/daemon/internal/ledger/memory"
	"github.com/garm-dev/garm/daemon/internal/listing"
	replaymemory "github.com/garm-dev/garm/daemon/internal/replay/memory"
	"github.com/garm-dev/garm/daemon/internal/transport"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/runtime/wire"
	"google.golang.org/protobuf/proto"
)

const (
	grantIssuer   = "https://grants.chain.test"
	grantAudience = "garm-grants"
)

// bankRig is a chain over the instance rules' fixture bank, with step 5 on
// (pay is MODE_GRANT) and an approval desk whose store counts the requests
// it is asked to open. The tool's answer is what the test sets.
type bankRig struct {
	chain    *chain.Chain
	gen      *catalogue.Generation
	recorder *memory.Recorder
	key      *keysettest.Key
	grantKey *keysettest.Key
	spent    *replaymemory.Spender
	asked    *countingStore
	audit    *auditmemory.Sink
	answer   atomic.Pointer[transport.Reply]
	called   atomic.Int64
}

func newBankRig(tb testing.TB) *bankRig {
	tb.Helper()
	return newBankRigWith(tb, nil, nil)
}

// newBankRigWith gives the tools policies (instancetest.Policies when nil,
// none when empty) and records rows with rec (a memory recorder the rig
// keeps when nil).
func newBankRigWith(tb testing.TB, policies map[string]*toolv1.InstancePolicy, rec ledger.Recorder) *bankRig {
	tb.Helper()
	r := &bankRig{recorder: memory.New(), spent: replaymemory.New(), asked: &countingStore{}, audit: auditmemory.New()}
	if rec == nil {
		rec = r.recorder
	}
	r.gen = instancetest.Load(tb, policies)
	pay := r.gen.Route(instancetest.Pay)
	policy := proto.Clone(pay.Policy).(*toolv1.ToolPolicy)
	policy.Approval = &toolv1.ToolPolicy_Approval{
		Mode: toolv1.ToolPolicy_Approval_MODE_GRANT, ApproverMinClearance: toolv1.Clearance_CLEARANCE_PUBLIC,
		MaxGrantAgeSeconds: 600, MaterialFields: []string{"account_id", "amount"},
	}
	pay.Policy = policy
	// get_payment is audited, so its outcome row goes to the audit sink.
	get := r.gen.Route(instancetest.GetPayment)
	policy = proto.Clone(get.Policy).(*toolv1.ToolPolicy)
	policy.Audit = &toolv1.ToolPolicy_Audit{Level: toolv1.ToolPolicy_Audit_LEVEL_AUDIT, RetainDays: 1}
	get.Policy = policy
	indefinitely := time.Duration(0)
	if err := catalogue.Mount(r.gen, catalogue.Steps{Grants: true, AuditRetention: &indefinitely}); err != nil {
		tb.Fatal(err)
	}
	serving := new(catalogue.Serving)
	serving.Store(r.gen)
	r.key = keysettest.NewKey(tb, "ES256", "k1")
	r.grantKey = keysettest.NewKey(tb, "ES256", "g1")
	a, err := authn.New(authn.Config{Issuers: []authn.Issuer{{Name: issuer, JWKSURL: keysettest.NewServer(tb, r.key).URL}}, Audience: "garm"})
	if err != nil {
		tb.Fatal(err)
	}
	grants, err := grant.New(grant.Config{Issuer: grantIssuer, JWKSURL: keysettest.NewServer(tb, r.grantKey).URL, Audience: grantAudience, Spender: r.spent})
	if err != nil {
		tb.Fatal(err)
	}
	desk, err := approval.New(r.asked, "https://approvals.chain.test")
	if err != nil {
		tb.Fatal(err)
	}
	r.chain = chain.New(chain.Config{
		Serving:   serving,
		Authn:     a,
		Input:     input.NewChecker(64),
		Redact:    redact.New(64, []byte("a chain test hash key")),
		Lister:    listing.New(listing.Options{}),
		Grants:    grants,
		Approvals: desk,
		Audit:     r.audit,
		Dispatch: dispatch.New(transport.Func(func(context.Context, *transport.Request) (*transport.Reply, error) {
			r.called.Add(1)
			return r.answer.Load(), nil
		})),
		Recorder:    rec,
		ToolTimeout: 5 * time.Second,
		Version:     "test",
	})
	return r
}

// answers sets the tool's answer: the message of route's output in JSON,
// or the tool's own refusal with code.
func (r *bankRig) answers(tb testing.TB, route, json string) {
	tb.Helper()
	b, err := proto.Marshal(cataloguetest.Message(tb, r.gen.Route(route).Output, json))
	if err != nil {
		tb.Fatal(err)
	}
	r.answer.Store(&transport.Reply{Body: b})
}

func (r *bankRig) refuses(code string) {
	r.answer.Store(&transport.Reply{ErrorCode: code, Error: "no such record"})
}

// persona is a caller's token claims.
type persona map[string]any

// customer is a customer with a customer id and two accounts; concierge
// is an agent acting for it with one; banker serves any customer.
func customer(attrs map[string]any) persona {
	return persona{"sub": "user:alice", "tenant": "acme", "garm": map[string]any{
		"clearance": "PUBLIC", "verbs": []string{"READ", "WRITE"}, "attrs": attrs}}
}

var (
	aliceAttrs = map[string]any{"customer_id": "C-1001", "accounts": []string{"A-1", "A-2"}}
	alice      = customer(aliceAttrs)
	concierge  = func() persona {
		p := customer(aliceAttrs)
		p["act"] = map[string]any{"sub": "agent:concierge", "garm": map[string]any{
			"clearance": "PUBLIC", "verbs": []string{"READ", "WRITE"}, "kind": "AGENT", "attrs": map[string]any{"accounts": []string{"A-1"}}}}
		return p
	}()
	banker = persona{"sub": "user:sam", "tenant": "acme", "garm": map[string]any{
		"clearance": "PUBLIC", "verbs": []string{"READ", "WRITE"}, "compartments": []string{"any-customer"}}}
)

func (r *bankRig) token(tb testing.TB, p persona) string {
	tb.Helper()
	claims := map[string]any{"iss": issuer, "aud": "garm", "exp": time.Now().Add(time.Hour).Unix()}
	for k, v := range p {
		claims[k] = v
	}
	b, err := json.Marshal(claims)
	if err != nil {
		tb.Fatal(err)
	}
	return r.key.Sign(tb, b)
}

// grant is a good grant for subject's call of pay with body.
func (r *bankRig) grant(tb testing.TB, subject, body string) string {
	tb.Helper()
	pay := r.gen.Route(instancetest.Pay)
	in := cataloguetest.Message(tb, pay.Input, body)
	digest, err := wire.RequestMaterialDigest(in.ProtoReflect(), pay.Policy.GetApproval().GetMaterialFields())
	if err != nil {
		tb.Fatal(err)
	}
	now := time.Now().Unix()
	b, _ := json.Marshal(map[string]any{
		"iss": grantIssuer, "aud": grantAudience, "jti": "grant-1", "iat": now - 5, "exp": now + 300,
		"garm_grant": map[string]any{"tool": pay.FQN, "subject": subject, "material": digest,
			"approver": "user:bob", "approver_clearance": "CONFIDENTIAL"},
	})
	return r.grantKey.Sign(tb, b)
}

func (r *bankRig) call(tb testing.TB, p persona, route, body string) *chain.Response {
	tb.Helper()
	return r.chain.Run(context.Background(), &chain.Request{HTTPMethod: "POST", Path: route,
		Authorization: "Bearer " + r.token(tb, p), JSON: true, Body: []byte(body), Surface: chain.SurfaceHTTP})
}

// countingStore is the pending-request store of approvals: it opens every
// request it is asked to and counts them.
type countingStore struct{ asks atomic.Int64 }

func (s *countingStore) Ask(_ context.Context, r pending.Request) (pending.Request, error) {
	s.asks.Add(1)
	r.ID = "aaaaaaaaaaaaaaaaaaaaaaaaaa"
	return r, nil
}

func (s *countingStore) Get(context.Context, string) (pending.Request, *pending.Decision, error) {
	return pending.Request{}, nil, pending.ErrNotFound
}

func (s *countingStore) Lookup(context.Context, string) (pending.Request, *pending.Decision, error) {
	return pending.Request{}, nil, pending.ErrNotFound
}

// Recall finds no earlier request: every call asks anew.
func (s *countingStore) Recall(context.Context, pending.Request) (pending.Request, *pending.Decision, error) {
	return pending.Request{}, nil, pending.ErrNotFound
}

func (s *countingStore) Collected(context.Context, pending.Request) error { return nil }
