package grant_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/chain/grant"
	"github.com/garm-dev/garm/daemon/internal/deny"
	"github.com/garm-dev/garm/daemon/internal/replay/memory"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

func TestNewNamesEveryProblemAtOnce(t *testing.T) {
	_, err := grant.New(grant.Config{JWKSURL: "file:///etc/keys.json", Skew: -time.Second})
	var m *deny.Misconfigured
	if !errors.As(err, &m) {
		t.Fatalf("New = %v, want a *deny.Misconfigured", err)
	}
	for _, want := range []string{"issuer", "JWKS URL", "audience", "spender", "skew"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the problems do not mention %s: %v", want, err)
		}
	}
	if len(m.Problems) != 5 {
		t.Errorf("%d problems, want 5: %q", len(m.Problems), m.Problems)
	}
}

// specSkew is design 7.5's skew (60 s), which 7.9 applies to grants: a
// literal, so the test notices the code drifting from the specification.
const specSkew = 60 * time.Second

func TestNewDefaultsTheSkewToATokensSkew(t *testing.T) {
	v, err := grant.New(grant.Config{Issuer: issuer, JWKSURL: "https://approvals.example/jwks.json", Audience: audience, Spender: memory.New()})
	if err != nil {
		t.Fatal(err)
	}
	if v.Skew() != specSkew {
		t.Errorf("skew %v, want %v", v.Skew(), specSkew)
	}
}

func TestTheHorizonIsTheLongestCeilingPlusTheSkew(t *testing.T) {
	all := catalogue.Generation(t).Tools
	cancel := tool(t, "cancel_payment")
	notGranted := withApproval(tool(t, "hold_payment"), func(a *toolv1.ToolPolicy_Approval) {
		a.Mode = toolv1.ToolPolicy_Approval_MODE_NOTIFY
	})
	for name, c := range map[string]struct {
		tools []*call.Tool
		want  time.Duration
	}{
		"every tool":        {all, 900*time.Second + time.Minute},
		"one tool":          {[]*call.Tool{cancel}, 60*time.Second + time.Minute},
		"no MODE_GRANT one": {[]*call.Tool{notGranted}, 0},
		"none":              {nil, 0},
	} {
		t.Run(name, func(t *testing.T) {
			if got := grant.Horizon(c.tools, time.Minute); got != c.want {
				t.Errorf("Horizon = %v, want %v", got, c.want)
			}
		})
	}
	f := newFixture(t)
	if got := f.v.Horizon(all); got != 900*time.Second+specSkew {
		t.Errorf("Verifier.Horizon = %v, want %v", got, 900*time.Second+specSkew)
	}
}
