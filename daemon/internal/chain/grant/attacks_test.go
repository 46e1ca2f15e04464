package grant_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/deny"
	"github.com/garm-dev/garm/daemon/internal/keyset/keysettest"
)

// attack is a grant that must be refused, and a word its ledger detail
// must hold so that the refusal is known to come from the right check.
type attack struct {
	name  string
	grant func(t *testing.T, f *fixture) string
	says  string
}

// claimed is an attack that changes one claim of a good grant.
func claimed(name, path string, v any, says string) attack {
	return attack{name: name, says: says, grant: func(t *testing.T, f *fixture) string {
		return f.sign(t, set(f.claims(), path, v))
	}}
}

func attacks() []attack {
	return []attack{
		claimed("wrong tool", "garm_grant.tool", cancelPayment, "another tool"),
		claimed("wrong subject", "garm_grant.subject", "user:eve", "another subject"),
		claimed("wrong material", "garm_grant.material", material("9999999", "GB29NWBK60161331926819", "GBP"), "other material"),
		claimed("material of a request whose field is absent", "garm_grant.material", material("<unset>", "GB29NWBK60161331926819", "GBP"), "other material"),
		claimed("material missing", "garm_grant.material", remove, "material"),
		claimed("material not a string", "garm_grant.material", 7, "material"),
		{name: "expired", says: "expired", grant: func(t *testing.T, f *fixture) string {
			now := f.clock.Now().Unix()
			return f.sign(t, set(set(f.claims(), "iat", now-200), "exp", now-61))
		}},
		{name: "too old for the tool's ceiling though exp is ahead", says: "300 seconds", grant: func(t *testing.T, f *fixture) string {
			now := f.clock.Now().Unix()
			return f.sign(t, set(set(f.claims(), "iat", now-301), "exp", now+3600))
		}},
		{name: "too old, claiming a longer ceiling of its own", says: "300 seconds", grant: func(t *testing.T, f *fixture) string {
			now := f.clock.Now().Unix()
			c := set(set(f.claims(), "iat", now-301), "exp", now+3600)
			return f.sign(t, set(c, "garm_grant.max_grant_age_seconds", 86400))
		}},
		{name: "issued in the future beyond the skew", says: "future", grant: func(t *testing.T, f *fixture) string {
			return f.sign(t, set(f.claims(), "iat", f.clock.Now().Unix()+61))
		}},
		{name: "not yet valid", says: "not valid before", grant: func(t *testing.T, f *fixture) string {
			return f.sign(t, set(f.claims(), "nbf", f.clock.Now().Unix()+120))
		}},
		claimed("approver clearance too low", "garm_grant.approver_clearance", "INTERNAL", "approver_min_clearance"),
		claimed("approver clearance unknown", "garm_grant.approver_clearance", "TOP_SECRET", "approver_clearance"),
		claimed("approver clearance unspecified", "garm_grant.approver_clearance", "UNSPECIFIED", "approver_clearance"),
		claimed("approver clearance a number", "garm_grant.approver_clearance", 40, "approver_clearance"),
		claimed("approver missing a compartment", "garm_grant.approver_compartments", []any{"treasury", "hr"}, `"payments-ops"`),
		claimed("approver compartments absent", "garm_grant.approver_compartments", remove, `"treasury"`),
		claimed("approver compartments not strings", "garm_grant.approver_compartments", []any{"treasury", 1}, "approver_compartments"),
		claimed("approver missing", "garm_grant.approver", remove, "approver"),
		claimed("approver empty", "garm_grant.approver", "", "approver"),
		claimed("an act claim", "act", map[string]any{"sub": "agent:helper"}, "act"),
		claimed("an act claim that is null", "act", nil, "act"),
		claimed("wrong issuer", "iss", "https://other-approvals.example", "iss"),
		claimed("issuer differing in a trailing slash", "iss", issuer+"/", "iss"),
		claimed("wrong audience", "aud", "garm.example", "aud"),
		claimed("an audience array without ours", "aud", []any{"garm.example", "other"}, "aud"),
		claimed("missing jti", "jti", remove, "jti"),
		claimed("empty jti", "jti", "", "jti"),
		claimed("jti not a string", "jti", 1, "jti"),
		claimed("missing iat", "iat", remove, "iat"),
		claimed("iat not a number", "iat", "yesterday", "iat"),
		claimed("missing exp", "exp", remove, "exp"),
		claimed("garm_grant missing", "garm_grant", remove, "garm_grant"),
		claimed("garm_grant not an object", "garm_grant", "yes", "garm_grant"),
		claimed("garm_grant null", "garm_grant", nil, "garm_grant"),
		{name: "payload not an object", says: "object", grant: func(t *testing.T, f *fixture) string {
			return f.key.Sign(t, []byte(`[1]`))
		}},
		{name: "bad signature", says: "signature", grant: func(t *testing.T, f *fixture) string {
			// Another key published nowhere, under the issuer's kid.
			return keysettest.NewKey(t, "ES256", f.key.Kid).Sign(t, encode(t, f.claims()))
		}},
		{name: "payload swapped under a good signature", says: "signature", grant: func(t *testing.T, f *fixture) string {
			good := strings.Split(f.sign(t, f.claims()), ".")
			other := strings.Split(f.sign(t, set(f.claims(), "garm_grant.subject", "user:eve")), ".")
			return good[0] + "." + other[1] + "." + good[2]
		}},
		{name: "alg none", says: "not allowed", grant: func(t *testing.T, f *fixture) string {
			h := f.key.Header()
			h["alg"] = "none"
			return keysettest.Unsigned(t, h, encode(t, f.claims())) + "AAAA"
		}},
		{name: "alg none without a signature", says: "empty part", grant: func(t *testing.T, f *fixture) string {
			h := f.key.Header()
			h["alg"] = "none"
			return keysettest.Unsigned(t, h, encode(t, f.claims()))
		}},
		{name: "HMAC keyed with the issuer's public key", says: "not allowed", grant: func(t *testing.T, f *fixture) string {
			h := f.key.Header()
			h["alg"] = "HS256"
			return keysettest.HMAC(t, h, encode(t, f.claims()), f.key.PublicKeyForms(t)[0])
		}},
		{name: "a kid the set does not have", says: "kid", grant: func(t *testing.T, f *fixture) string {
			return keysettest.NewKey(t, "ES256", "grants-2").Sign(t, encode(t, f.claims()))
		}},
		{name: "a key brought in the header", says: "signature", grant: func(t *testing.T, f *fixture) string {
			attacker := keysettest.NewKey(t, "ES256", f.key.Kid)
			var jwk map[string]any
			if err := json.Unmarshal(attacker.JWK(t), &jwk); err != nil {
				t.Fatal(err)
			}
			h := attacker.Header()
			h["jwk"] = jwk
			return attacker.SignWith(t, h, encode(t, f.claims()))
		}},
		{name: "over 16 KiB", says: "larger than", grant: func(t *testing.T, f *fixture) string {
			return f.sign(t, set(f.claims(), "garm_grant.notes", strings.Repeat("a", 16<<10)))
		}},
		{name: "not a JWS", says: "parts", grant: func(*testing.T, *fixture) string { return "yes-please" }},
	}
}

func TestEveryAttackIsPermissionDeniedAndSpendsNothing(t *testing.T) {
	for _, a := range attacks() {
		t.Run(a.name, func(t *testing.T) {
			f := newFixture(t)
			res, err := f.check(t, a.grant(t, f))
			d := wantDenied(t, err, deny.PermissionDenied)
			if !strings.Contains(d.Detail, a.says) {
				t.Errorf("detail %q does not say %q", d.Detail, a.says)
			}
			if len(d.Extra) != 0 {
				t.Errorf("the refusal adds %v to the wire body", d.Extra)
			}
			if res.JTI != "" {
				t.Errorf("a refused grant reports jti %q", res.JTI)
			}
			if spent := f.spent.Spends(); len(spent) != 0 {
				t.Errorf("a refused grant was spent: %q", spent)
			}
			// The good grant still works afterwards: nothing was burnt.
			f.accept(t, f.sign(t, f.claims()))
		})
	}
}

func TestNoRefusalDetailQuotesTheRequestOrTheGrant(t *testing.T) {
	for _, a := range attacks() {
		t.Run(a.name, func(t *testing.T) {
			f := newFixture(t)
			g := a.grant(t, f)
			_, err := f.check(t, g)
			d := wantDenied(t, err, deny.PermissionDenied)
			for _, secret := range []string{"GB29NWBK60161331926819", "125000", "invoice 7", "user:eve", "user:bob", referenceDigest, g[:min(len(g), 40)]} {
				if strings.Contains(d.Detail, secret) {
					t.Errorf("detail %q quotes %q", d.Detail, secret)
				}
			}
		})
	}
}
