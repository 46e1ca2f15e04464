package keyset

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/garm-dev/garm/daemon/internal/keyset/keysettest"
	"github.com/lestrrat-go/jwx/v3/jwk"
)

func TestNothingIsFetchedUntilAKeyIsNeededAndThenOnlyOnce(t *testing.T) {
	k := keysettest.NewKey(t, "ES256", "k1")
	srv := keysettest.NewServer(t, k)
	s, _ := newSet(t, srv)
	wantHits(t, srv, 0)
	for range 3 {
		mustVerify(t, s, k.Sign(t, payload))
	}
	wantHits(t, srv, 1)
}

func TestConcurrentFirstUsesShareOneFetch(t *testing.T) {
	k := keysettest.NewKey(t, "ES256", "k1")
	srv := keysettest.NewServer(t, k)
	s, _ := newSet(t, srv)
	token := k.Sign(t, payload)
	release := srv.Hold()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Go(func() {
			_, _, err := verify(t, s, token)
			errs <- err
		})
	}
	<-srv.Arrived()
	release()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("a concurrent first use was refused: %v", err)
		}
	}
	wantHits(t, srv, 1)
}

func TestAnUnknownKidRefetchesAtMostOncePerMinute(t *testing.T) {
	k := keysettest.NewKey(t, "ES256", "k1")
	srv := keysettest.NewServer(t, k)
	s, clock := newSet(t, srv)
	mustVerify(t, s, k.Sign(t, payload))
	wantHits(t, srv, 1)

	rotated := keysettest.NewKey(t, "ES256", "k2")
	stranger := keysettest.NewKey(t, "ES256", "k-unknown")
	// A set fetched less than a minute ago is not fetched again.
	mustRefuse(t, s, stranger.Sign(t, payload))
	wantHits(t, srv, 1)

	clock.Advance(specUnknownKidInterval)
	err := mustRefuse(t, s, stranger.Sign(t, payload))
	if !errors.Is(err, errUnknownKid) {
		t.Fatalf("refused with %v, want an unknown kid", err)
	}
	wantHits(t, srv, 2)
	for range 5 {
		mustRefuse(t, s, stranger.Sign(t, payload))
		mustRefuse(t, s, rotated.Sign(t, payload))
	}
	wantHits(t, srv, 2)

	// A key published since is found by the next refetch a minute later.
	srv.Publish(t, k, rotated)
	clock.Advance(specUnknownKidInterval - time.Second)
	mustRefuse(t, s, rotated.Sign(t, payload))
	wantHits(t, srv, 2)
	clock.Advance(time.Second)
	mustVerify(t, s, rotated.Sign(t, payload))
	mustVerify(t, s, k.Sign(t, payload))
	wantHits(t, srv, 3)
}

func TestAUseNearTheEndOfTheSetsLifeRefreshesItInTheBackground(t *testing.T) {
	k := keysettest.NewKey(t, "ES256", "k1")
	srv := keysettest.NewServer(t, k)
	s, clock := newSet(t, srv)
	mustVerify(t, s, k.Sign(t, payload))

	clock.Advance(specTTL - RefreshAhead - time.Second)
	mustVerify(t, s, k.Sign(t, payload))
	settle(t, s)
	wantHits(t, srv, 1)

	// Inside the last part of its life: the use is served from the set it
	// has, and one refresh starts, however many uses follow while it runs.
	clock.Advance(time.Second)
	release := srv.Hold()
	for range 5 {
		mustVerify(t, s, k.Sign(t, payload))
	}
	release()
	settle(t, s)
	wantHits(t, srv, 2)

	// The refreshed set lives a full specTTL from when the refresh began.
	clock.Advance(specTTL - RefreshAhead - time.Second)
	mustVerify(t, s, k.Sign(t, payload))
	settle(t, s)
	wantHits(t, srv, 2)
}

func TestARefreshThatFailsLeavesTheFreshSetServingUntilItIsStale(t *testing.T) {
	k := keysettest.NewKey(t, "ES256", "k1")
	srv := keysettest.NewServer(t, k)
	s, clock := newSet(t, srv)
	mustVerify(t, s, k.Sign(t, payload))

	srv.Serve(http.StatusInternalServerError, []byte("down"))
	clock.Advance(specTTL - RefreshAhead)
	mustVerify(t, s, k.Sign(t, payload))
	settle(t, s)
	wantHits(t, srv, 2)
	mustVerify(t, s, k.Sign(t, payload))
	settle(t, s)
	wantHits(t, srv, 2) // not retried at once

	clock.Advance(RefreshAhead - time.Nanosecond)
	mustVerify(t, s, k.Sign(t, payload))
	settle(t, s)
	wantHits(t, srv, 3)

	clock.Advance(time.Nanosecond)
	err := mustRefuse(t, s, k.Sign(t, payload))
	if !strings.Contains(err.Error(), "unavailable") {
		t.Fatalf("refused with %q, want the set unavailable", err)
	}
}

func TestAStaleSetWhoseEndpointFailsRefusesAndRecoversWithTheEndpoint(t *testing.T) {
	k := keysettest.NewKey(t, "ES256", "k1")
	srv := keysettest.NewServer(t, k)
	s, clock := newSet(t, srv)
	mustVerify(t, s, k.Sign(t, payload))

	srv.Serve(http.StatusServiceUnavailable, nil)
	clock.Advance(specTTL)
	mustRefuse(t, s, k.Sign(t, payload))
	wantHits(t, srv, 2)
	// An endpoint that just failed is not asked again on every call.
	mustRefuse(t, s, k.Sign(t, payload))
	wantHits(t, srv, 2)

	srv.Publish(t, k)
	clock.Advance(RetryAfterFailure)
	mustVerify(t, s, k.Sign(t, payload))
	wantHits(t, srv, 3)
}

func TestAFirstFetchThatFailsRefuses(t *testing.T) {
	k := keysettest.NewKey(t, "ES256", "k1")
	srv := keysettest.NewServer(t, k)
	srv.Serve(http.StatusNotFound, []byte(`{"keys":[]}`))
	s, _ := newSet(t, srv)
	mustRefuse(t, s, k.Sign(t, payload))
}

func TestAWaiterThatGivesUpDoesNotCancelTheFetchOthersNeed(t *testing.T) {
	k := keysettest.NewKey(t, "ES256", "k1")
	srv := keysettest.NewServer(t, k)
	s, _ := newSet(t, srv)
	release := srv.Hold()
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-srv.Arrived()
		cancel()
	}()
	if _, _, err := s.Verify(ctx, []byte(k.Sign(t, payload))); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled wait answered %v, want context.Canceled", err)
	}
	release()
	mustVerify(t, s, k.Sign(t, payload))
	wantHits(t, srv, 1)
}

func TestABodyOverTheLimitIsRefused(t *testing.T) {
	k := keysettest.NewKey(t, "ES256", "k1")
	srv := keysettest.NewServer(t, k)
	body := append([]byte(`{"keys":[`+string(k.JWK(t))+`]}`), bytes.Repeat([]byte(" "), specMaxBodyBytes)...)
	srv.Serve(http.StatusOK, body)
	s, clock := newSet(t, srv)
	err := mustRefuse(t, s, k.Sign(t, payload))
	if !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("refused with %q, want the body too large", err)
	}
	srv.Serve(http.StatusOK, body[:specMaxBodyBytes])
	clock.Advance(RetryAfterFailure)
	mustVerify(t, s, k.Sign(t, payload))
}

func TestABodyThatIsNotAKeySetIsRefused(t *testing.T) {
	k := keysettest.NewKey(t, "ES256", "k1")
	for name, body := range map[string]string{
		"a bare key":   string(k.JWK(t)),
		"an array":     "[" + string(k.JWK(t)) + "]",
		"keys null":    `{"keys":null}`,
		"keys wrong":   `{"keys":{"kid":"k1"}}`,
		"not JSON":     "<html>",
		"empty":        "",
		"trailing bin": `{"keys":[]}` + "\x00",
	} {
		t.Run(name, func(t *testing.T) {
			srv := keysettest.NewServer(t)
			srv.Serve(http.StatusOK, []byte(body))
			s, _ := newSet(t, srv)
			mustRefuse(t, s, k.Sign(t, payload))
		})
	}
}

func TestUnusableKeysAreSkippedAndTheRestServe(t *testing.T) {
	good := keysettest.NewKey(t, "ES256", "good")
	dupA := keysettest.NewKey(t, "ES256", "dup")
	dupB := keysettest.NewKey(t, "ES256", "dup")
	weak, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	weakJWK, _ := json.Marshal(map[string]string{"kty": "RSA", "kid": "weak", "e": "AQAB",
		"n": base64.RawURLEncoding.EncodeToString(weak.N.Bytes())})
	enc := jwkJSON(t, good.Public(), map[string]any{"kid": "enc", "use": "enc"})
	wrap := jwkJSON(t, good.Public(), map[string]any{"kid": "wrap", "key_ops": []string{"wrapKey"}})
	noKid := jwkJSON(t, good.Public(), nil)
	body, _ := json.Marshal(map[string]any{"keys": []json.RawMessage{
		json.RawMessage(`{"kty":"oct","kid":"hmac","k":"c2VjcmV0"}`),
		json.RawMessage(`{"kty":"future","kid":"pq"}`),
		weakJWK, enc, wrap, noKid, dupA.JWK(t), dupB.JWK(t), good.JWK(t),
	}})
	srv := keysettest.NewServer(t)
	srv.Serve(http.StatusOK, body)
	var logged bytes.Buffer
	s := NewSet(srv.URL, Options{Logger: slog.New(slog.NewTextHandler(&logged, nil))})

	mustVerify(t, s, good.Sign(t, payload))
	if got := strings.Count(logged.String(), "level=WARN msg=\"keyset: skipping"); got != 7 {
		t.Fatalf("%d keys were logged as skipped, want 7:\n%s", got, logged.String())
	}
	for name, token := range map[string]string{
		"dup A":      dupA.Sign(t, payload),
		"dup B":      dupB.Sign(t, payload),
		"enc":        good.WithKid("enc", "ES256").Sign(t, payload),
		"wrap":       good.WithKid("wrap", "ES256").Sign(t, payload),
		"hmac":       keysettest.HMAC(t, map[string]any{"alg": "HS256", "kid": "hmac"}, payload, []byte("secret")),
		"hmac as ES": good.WithKid("hmac", "ES256").Sign(t, payload),
		"weak":       weakSigner(t, weak),
	} {
		t.Run(name, func(t *testing.T) { mustRefuse(t, s, token) })
	}
	wantHits(t, srv, 1)
}

func jwkJSON(t *testing.T, public any, fields map[string]any) json.RawMessage {
	t.Helper()
	key, err := jwk.Import(public)
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range fields {
		if err := key.Set(name, v); err != nil {
			t.Fatal(err)
		}
	}
	b, err := json.Marshal(key)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// weakSigner is a token signed by the 1024-bit key under its kid.
func weakSigner(t *testing.T, key *rsa.PrivateKey) string {
	t.Helper()
	input := keysettest.SigningInput(t, map[string]any{"alg": "RS256", "kid": "weak"}, payload)
	sum := sha256.Sum256([]byte(input))
	sig, err := rsa.SignPKCS1v15(nil, key, crypto.SHA256, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig)
}
