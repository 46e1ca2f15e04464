package signed_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/catalogue-builder/signature"
	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/catalogue/signed"
	"github.com/garm-dev/garm/daemon/internal/catalogue/signed/versions"
	"github.com/garm-dev/garm/runtime/garmtooltest"
)

func bounded(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func newSigner(t *testing.T) *signature.Signer {
	t.Helper()
	s, _, err := signature.GenerateKey(signature.AlgEdDSA)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func keySet(t *testing.T, signers ...*signature.Signer) []byte {
	t.Helper()
	var jwks []map[string]any
	for _, s := range signers {
		j, err := signature.PublicJWK(s.Public(), "")
		if err != nil {
			t.Fatal(err)
		}
		jwks = append(jwks, j)
	}
	data, err := signature.MarshalKeySet(jwks)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// pairFetches are the fetches of an artifact and its envelope.
func pairFetches(t *testing.T, data []byte, version uint64, name string, signers ...*signature.Signer) (env, art signature.Fetch) {
	t.Helper()
	e, err := signature.Sign(signature.Statement{Catalogue: name, Digest: artifact.Digest(data), Version: version, SignedAt: time.Now()}, signers...)
	if err != nil {
		t.Fatal(err)
	}
	envBytes, err := e.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return func(context.Context) ([]byte, error) { return envBytes, nil },
		func(context.Context) ([]byte, error) { return data, nil }
}

func TestTheKeySetAtAURLIsReadAfreshForEveryPair(t *testing.T) {
	t.Parallel()
	old, fresh := newSigner(t), newSigner(t)
	var served atomic.Pointer[[]byte]
	first := keySet(t, old)
	served.Store(&first)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(*served.Load()) }))
	t.Cleanup(srv.Close)
	gate := signed.New(signed.Config{Keys: signed.NewKeys(srv.URL, nil)})
	ctx := bounded(t)

	if _, err := readPair(t, gate, ctx, []byte("a catalogue"), 1, "bank", old); err != nil {
		t.Fatalf("signed by the key served: %v", err)
	}
	second := keySet(t, fresh)
	served.Store(&second)
	var refusal *signed.Refusal
	if _, err := readPair(t, gate, ctx, []byte("a catalogue"), 2, "bank", old); !errors.As(err, &refusal) || refusal.Check != "unknown_key" {
		t.Fatalf("signed by the key rotated out: %v, want unknown_key", err)
	}
	if _, err := readPair(t, gate, ctx, []byte("a catalogue"), 2, "bank", fresh); err != nil {
		t.Fatalf("signed by the key rotated in: %v", err)
	}
}

// readPair reads, through gate, data signed as version of name.
func readPair(t *testing.T, gate *signed.Gate, ctx context.Context, data []byte, version uint64, name string, signers ...*signature.Signer) (*signature.Pair, error) {
	t.Helper()
	env, art := pairFetches(t, data, version, name, signers...)
	return gate.Read(ctx, env, art)
}

func TestAKeySetThePolicyCannotBeMetWithJudgesNothing(t *testing.T) {
	t.Parallel()
	owner := newSigner(t)
	path := filepath.Join(t.TempDir(), "keys.json")
	if err := os.WriteFile(path, keySet(t, owner), 0o600); err != nil {
		t.Fatal(err)
	}
	gate := signed.New(signed.Config{Keys: signed.NewKeys(path, nil), Policy: signature.Policy{MinSigners: 2}})
	if _, err := readPair(t, gate, bounded(t), []byte("a catalogue"), 1, "bank", owner); !errors.Is(err, signed.ErrKeys) {
		t.Fatalf("two signers required of a one-key set: %v, want ErrKeys", err)
	}
	if err := os.WriteFile(path, []byte(`{"keys":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readPair(t, signed.New(signed.Config{Keys: signed.NewKeys(path, nil)}), bounded(t), []byte("a catalogue"), 1, "bank", owner); !errors.Is(err, signed.ErrKeys) {
		t.Fatalf("an empty key set: %v, want ErrKeys", err)
	}
}

func TestTheVersionRule(t *testing.T) {
	t.Parallel()
	owner := newSigner(t)
	path := filepath.Join(t.TempDir(), "keys.json")
	if err := os.WriteFile(path, keySet(t, owner), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := garmtooltest.StartJetStream(t)
	_, js := garmtooltest.ConnectJetStream(t, srv.URL())
	ctx := bounded(t)
	store, err := versions.Ensure(ctx, js, 1)
	if err != nil {
		t.Fatal(err)
	}
	gate := signed.New(signed.Config{Keys: signed.NewKeys(path, nil), RollbackTo: 2})
	gate.UseVersions(store)
	serving := &catalogue.Signed{Catalogue: "bank"}
	for i, step := range []struct {
		data    string
		name    string
		version uint64
		check   string // "" accepted
	}{
		{"v5", "bank", 5, ""},
		{"v5", "bank", 5, ""}, // a restart on what is recorded
		{"v5 other bytes", "bank", 5, signed.CheckVersionReused},
		{"v4", "bank", 4, signed.CheckRollback},
		{"v2", "bank", 2, ""}, // the one rollback allowed
		{"v3", "bank", 3, ""},
		{"v2", "bank", 2, signed.CheckRollback}, // made once only
		{"v9", "another", 9, signed.CheckOtherCatalogue},
	} {
		pair, err := readPair(t, gate, ctx, []byte(step.data), step.version, step.name, owner)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		_, err = gate.Commit(ctx, pair, serving)
		var refusal *signed.Refusal
		switch {
		case step.check == "" && err != nil:
			t.Fatalf("step %d (%s version %d): %v, want it accepted", i, step.data, step.version, err)
		case step.check != "" && (!errors.As(err, &refusal) || refusal.Check != step.check):
			t.Fatalf("step %d (%s version %d): %v, want %s", i, step.data, step.version, err, step.check)
		}
	}
	if rec, _, _, _ := store.Highest(ctx, "bank"); rec.Version != 3 || rec.RolledBackTo != 2 {
		t.Fatalf("the record ends at %+v, want version 3 remembering the rollback to 2", rec)
	}
	// A restarted garmd given the same flag: the rollback was made.
	again := signed.New(signed.Config{Keys: signed.NewKeys(path, nil), RollbackTo: 2})
	again.UseVersions(store)
	pair, err := readPair(t, again, ctx, []byte("v2"), 2, "bank", owner)
	if err != nil {
		t.Fatal(err)
	}
	var refusal *signed.Refusal
	if _, err := again.Commit(ctx, pair, nil); !errors.As(err, &refusal) || refusal.Check != signed.CheckRollback {
		t.Fatalf("the same rollback after a restart: %v, want %s", err, signed.CheckRollback)
	}
}

func TestAConfiguredNameRefusesEveryOtherNameEvenAtStart(t *testing.T) {
	t.Parallel()
	owner := newSigner(t)
	path := filepath.Join(t.TempDir(), "keys.json")
	if err := os.WriteFile(path, keySet(t, owner), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := garmtooltest.StartJetStream(t)
	_, js := garmtooltest.ConnectJetStream(t, srv.URL())
	ctx := bounded(t)
	store, err := versions.Ensure(ctx, js, 1)
	if err != nil {
		t.Fatal(err)
	}
	gate := signed.New(signed.Config{Keys: signed.NewKeys(path, nil), Name: "bank"})
	gate.UseVersions(store)
	staging, err := readPair(t, gate, ctx, []byte("staging"), 99, "bank-staging", owner)
	if err != nil {
		t.Fatal(err)
	}
	var refusal *signed.Refusal
	if err := gate.Judge(ctx, staging, nil); !errors.As(err, &refusal) || refusal.Check != signed.CheckOtherCatalogue {
		t.Fatalf("another name at start: %v, want %s", err, signed.CheckOtherCatalogue)
	}
	bank, err := readPair(t, gate, ctx, []byte("bank"), 1, "bank", owner)
	if err != nil {
		t.Fatal(err)
	}
	if err := gate.Judge(ctx, bank, nil); err != nil {
		t.Fatalf("the configured name at start: %v", err)
	}
}
