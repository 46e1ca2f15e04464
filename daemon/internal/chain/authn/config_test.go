package authn

import (
	"errors"
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/deny"
)

func TestNewReportsEveryConfigurationProblemAtOnce(t *testing.T) {
	_, err := New(Config{
		Issuers: []Issuer{
			{Name: "", JWKSURL: "https://idp.example/jwks"},
			{Name: issuerA, JWKSURL: "ftp://idp.example/jwks"},
			{Name: issuerA, JWKSURL: "https://idp.example/jwks"},
			{Name: issuerB, JWKSURL: "/relative"},
		},
		Skew: -1,
	})
	var m *deny.Misconfigured
	if !errors.As(err, &m) {
		t.Fatalf("New answered %v, want *deny.Misconfigured", err)
	}
	for _, want := range []string{"issuer 0 has no name", "ftp://", "configured twice", "/relative", "no audience", "negative"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the problems %q do not mention %q", m.Problems, want)
		}
	}
	if len(m.Problems) != 6 {
		t.Errorf("%d problems, want 6: %q", len(m.Problems), m.Problems)
	}
}

func TestNewRefusesAConfigurationWithoutIssuers(t *testing.T) {
	_, err := New(Config{Audience: audience})
	if err == nil || !strings.Contains(err.Error(), "no issuer") {
		t.Fatalf("New answered %v, want no issuer reported", err)
	}
}

func TestANilTaxonomyIsAnInternalFailureNotARefusal(t *testing.T) {
	f := newFixture(t)
	_, err := f.auth.Authenticate(t.Context(), "Bearer "+f.sign(t, f.claims()), nil)
	var failed *deny.Failed
	if !errors.As(err, &failed) || failed.Code != deny.Internal {
		t.Fatalf("answered %v, want an internal failure", err)
	}
}
