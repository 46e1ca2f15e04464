package chain_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/catalogue/cataloguetest"
	"github.com/garm-dev/garm/daemon/internal/chain"
	"github.com/garm-dev/garm/daemon/internal/chain/authn"
	"github.com/garm-dev/garm/daemon/internal/chain/dispatch"
	"github.com/garm-dev/garm/daemon/internal/chain/input"
	"github.com/garm-dev/garm/daemon/internal/chain/redact"
	"github.com/garm-dev/garm/daemon/internal/keyset/keysettest"
	"github.com/garm-dev/garm/daemon/internal/ledger"
	"github.com/garm-dev/garm/daemon/internal/ledger/memory"
	"github.com/garm-dev/garm/daemon/internal/listing"
	"github.com/garm-dev/garm/daemon/internal/transport"
)

const issuer = "https://idp.chain.test"

// rig is a chain over the calculator's catalogue with a transport the test
// writes: everything is real but the bus.
type rig struct {
	chain    *chain.Chain
	serving  *catalogue.Serving
	recorder *memory.Recorder
	key      *keysettest.Key
	reply    transport.Func
}

func newRig(tb testing.TB) *rig {
	tb.Helper()
	return newRigRecording(tb, nil)
}

// newRigRecording records rows with rec, or with a memory recorder the rig
// keeps when rec is nil.
func newRigRecording(tb testing.TB, rec ledger.Recorder) *rig {
	tb.Helper()
	r := &rig{serving: new(catalogue.Serving), recorder: memory.New()}
	if rec == nil {
		rec = r.recorder
	}
	gen, err := catalogue.Load(cataloguetest.Calculator(tb), catalogue.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	if err := catalogue.Mount(gen, catalogue.Steps{}); err != nil {
		tb.Fatal(err)
	}
	r.serving.Store(gen)
	r.key = keysettest.NewKey(tb, "ES256", "k1")
	keys := keysettest.NewServer(tb, r.key)
	a, err := authn.New(authn.Config{Issuers: []authn.Issuer{{Name: issuer, JWKSURL: keys.URL}}, Audience: "garm"})
	if err != nil {
		tb.Fatal(err)
	}
	r.chain = chain.New(chain.Config{
		Serving:     r.serving,
		Authn:       a,
		Input:       input.NewChecker(64),
		Redact:      redact.New(64, []byte("a chain test hash key")),
		Lister:      listing.New(listing.Options{}),
		Dispatch:    dispatch.New(transport.Func(func(ctx context.Context, req *transport.Request) (*transport.Reply, error) { return r.reply(ctx, req) })),
		Recorder:    rec,
		ToolTimeout: 5 * time.Second,
		Version:     "test",
	})
	return r
}

// token is a PUBLIC reader's token.
func (r *rig) token(tb testing.TB) string {
	tb.Helper()
	claims, _ := json.Marshal(map[string]any{
		"iss": issuer, "sub": "user:t", "aud": "garm", "exp": time.Now().Add(time.Hour).Unix(),
		"garm": map[string]any{"clearance": "PUBLIC", "verbs": []string{"READ"}},
	})
	return r.key.Sign(tb, claims)
}

func (r *rig) request(token, path, body string) *chain.Request {
	return &chain.Request{HTTPMethod: "POST", Path: path, Authorization: "Bearer " + token, JSON: true, Body: []byte(body)}
}
