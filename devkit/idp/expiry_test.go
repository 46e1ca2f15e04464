package idp_test

import (
	"errors"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwt"

	"github.com/garm-dev/garm/devkit/idp"
)

func TestATokenExpiresAtItsTTL(t *testing.T) {
	ctx := testContext(t)
	const ttl = 5 * time.Minute
	i := newIdP(t, idp.Options{Now: fixedClock, TokenTTL: ttl})
	srv := start(t, i)
	token := fetchToken(t, ctx, srv, "user=support&as=assistant")

	claims, _ := claimsOf(t, token)
	iat := fixedTime.Unix()
	for name, want := range map[string]int64{"iat": iat, "nbf": iat, "exp": fixedTime.Add(ttl).Unix()} {
		if got := asJSON(t, claims[name]); got != asJSON(t, want) {
			t.Errorf("%s = %s, want %d", name, got, want)
		}
	}

	at := func(when time.Time) jwt.ParseOption {
		return jwt.WithClock(jwt.ClockFunc(func() time.Time { return when }))
	}
	noSkew := jwt.WithAcceptableSkew(0)
	if _, err := verify(t, ctx, srv, i, token, at(fixedTime), noSkew); err != nil {
		t.Errorf("at issue: %v", err)
	}
	if _, err := verify(t, ctx, srv, i, token, at(fixedTime.Add(ttl-time.Second)), noSkew); err != nil {
		t.Errorf("a second before the TTL: %v", err)
	}
	if _, err := verify(t, ctx, srv, i, token, at(fixedTime.Add(ttl+time.Second)), noSkew); !errors.Is(err, jwt.TokenExpiredError()) {
		t.Errorf("a second after the TTL: %v, want expired", err)
	}
	if _, err := verify(t, ctx, srv, i, token, at(fixedTime.Add(-time.Second)), noSkew); err == nil {
		t.Error("a second before issue: accepted, want not yet valid")
	}
}

func TestTokensLiveAnHourByDefaultAndTheClockIsTruncatedToSeconds(t *testing.T) {
	i := newIdP(t, idp.Options{Now: func() time.Time { return fixedTime.Add(999 * time.Millisecond) }})
	token, err := i.Token("outsider", "")
	if err != nil {
		t.Fatal(err)
	}
	claims, _ := claimsOf(t, token)
	if g, w := asJSON(t, []any{claims["iat"], claims["exp"]}), asJSON(t, []int64{fixedTime.Unix(), fixedTime.Add(time.Hour).Unix()}); g != w {
		t.Errorf("iat, exp = %s, want %s", g, w)
	}
}

func TestOptionsAreValidated(t *testing.T) {
	p := loadPersonas(t)
	bad := map[string]idp.Options{
		"a negative TTL":         {TokenTTL: -time.Minute},
		"a sub-second TTL":       {TokenTTL: 500 * time.Millisecond},
		"a relative issuer":      {Issuer: "idp.garm.invalid"},
		"an issuer with no host": {Issuer: "https://"},
	}
	for name, o := range bad {
		if _, err := idp.New(p, o); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	i, err := idp.New(p, idp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if i.Issuer() != idp.DefaultIssuer || i.Audience() != idp.DefaultAudience {
		t.Errorf("defaults: issuer %q audience %q", i.Issuer(), i.Audience())
	}
}
