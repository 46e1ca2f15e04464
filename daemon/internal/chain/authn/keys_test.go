package authn

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/garm-dev/garm/daemon/internal/keyset"
	"github.com/garm-dev/garm/daemon/internal/keyset/keysettest"
)

func TestAnUnknownKidRefetchesTheKeySetAtMostOncePerMinute(t *testing.T) {
	f := newFixture(t)
	rotated := keysettest.NewKey(t, "ES256", "a-2")
	token := func(jti string) string {
		return "Bearer " + rotated.Sign(t, encode(t, set(f.claims(), "jti", jti)))
	}
	detail := f.refuse(t, token("1"))
	if !strings.Contains(detail, `"a-2"`) {
		t.Fatalf("detail %q does not name the unknown kid", detail)
	}
	for i := range 10 {
		f.refuse(t, token(string(rune('a'+i))))
	}
	wantFetches(t, f.jwksA, 1)

	f.clock.Advance(specUnknownKidInterval)
	f.refuse(t, token("2"))
	f.refuse(t, token("3"))
	wantFetches(t, f.jwksA, 2)

	// The issuer rotates; the new key is found by the next allowed refetch.
	f.jwksA.Publish(t, f.keyA, rotated)
	f.clock.Advance(specUnknownKidInterval / 2)
	f.refuse(t, token("4"))
	wantFetches(t, f.jwksA, 2)
	f.clock.Advance(specUnknownKidInterval / 2)
	f.accept(t, strings.TrimPrefix(token("5"), "Bearer "))
	wantFetches(t, f.jwksA, 3)
}

func TestAStaleKeySetWhoseEndpointFailsRefuses(t *testing.T) {
	f := newFixture(t)
	f.accept(t, f.sign(t, f.claims()))
	f.jwksA.Serve(http.StatusBadGateway, []byte("upstream down"))
	f.clock.Advance(specKeySetTTL)
	detail := f.refuse(t, "Bearer "+f.sign(t, f.claims()))
	if !strings.Contains(detail, "unavailable") {
		t.Fatalf("detail %q does not say the key set is unavailable", detail)
	}
	// Recovery needs no restart.
	f.jwksA.Publish(t, f.keyA)
	f.clock.Advance(keyset.RetryAfterFailure)
	f.accept(t, f.sign(t, f.claims()))
}

func TestAKeySetIsRefreshedAheadOfItsExpiry(t *testing.T) {
	f := newFixture(t)
	f.accept(t, f.sign(t, f.claims()))
	rotated := keysettest.NewKey(t, "ES256", "a-2")
	f.jwksA.Publish(t, f.keyA, rotated)

	// A use in the last part of the set's life starts one background
	// refresh; the rotated key is then known without an unknown-kid refetch.
	f.clock.Advance(specKeySetTTL - keyset.RefreshAhead)
	f.accept(t, f.sign(t, set(f.claims(), "jti", "t-2")))
	f.accept(t, rotated.Sign(t, encode(t, f.claims())))
	wantFetches(t, f.jwksA, 2)

	// The refreshed set outlives the first one's TTL.
	f.clock.Advance(keyset.RefreshAhead + time.Minute)
	f.accept(t, f.sign(t, set(f.claims(), "jti", "t-3")))
	wantFetches(t, f.jwksA, 2)
}

func wantFetches(t *testing.T, srv *keysettest.Server, want int64) {
	t.Helper()
	if got := srv.Hits(); got != want {
		t.Fatalf("the key set was fetched %d times, want %d", got, want)
	}
}
