package catalogue_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/catalogue/cataloguetest"
	"github.com/garm-dev/garm/daemon/internal/deny"
)

// The mount fixture declares one tool per rule of the allowlist (shop.v1)
// and one at the listing's reserved path (garm.v1); the future fixture
// declares governance by numbers this build has no name for.
const (
	mountFixture  = "testdata/mount"
	futureFixture = "testdata/future"
)

func retention(d time.Duration) *time.Duration { return &d }

// problemsOf is what Mount says about one tool.
func problemsOf(t *testing.T, err error, fqn string) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	var m *deny.Misconfigured
	if !errors.As(err, &m) {
		t.Fatalf("Mount returned %T, want *deny.Misconfigured", err)
	}
	var out []string
	for _, p := range m.Problems {
		if strings.HasPrefix(p, "tool "+fqn+" ") {
			out = append(out, p)
		}
	}
	return out
}

func TestMountAllowsOnlyWhatThisGarmdEnforces(t *testing.T) {
	g := cataloguetest.Load(t, mountFixture)
	future := cataloguetest.Load(t, futureFixture)
	const day = 24 * time.Hour
	cases := []struct {
		rule  string
		tool  string
		steps catalogue.Steps
		// refuse is the problem's text after the tool's name; "" mounts.
		refuse string
	}{
		{"a tool without optional governance mounts with nothing on", "shop.v1.browse", catalogue.Steps{}, ""},
		{"MODE_GRANT without step 5", "shop.v1.refund", catalogue.Steps{Notify: true, AuditRetention: retention(0)},
			"declares approval MODE_GRANT, which needs approval grants (step 5), and no grant issuer is configured (--grant-issuer)"},
		{"MODE_GRANT with step 5", "shop.v1.refund", catalogue.Steps{Grants: true}, ""},
		{"MODE_GRANT with a bucket keeping spent grants long enough", "shop.v1.refund", catalogue.Steps{Grants: true, SpentFor: 6 * time.Minute, GrantSkew: time.Minute}, ""},
		{"MODE_GRANT with a bucket forgetting spent grants too soon", "shop.v1.refund", catalogue.Steps{Grants: true, SpentFor: 5 * time.Minute, GrantSkew: time.Minute},
			"declares approval MODE_GRANT with max_grant_age_seconds 300: with the 1m0s skew a grant is accepted for 6m0s, longer than GARM_GRANTS_SPENT keeps a spent grant (its TTL is 5m0s), so a spent grant could be spent again; raise the bucket's TTL to at least 6m0s"},
		{"MODE_GRANT without approver_min_clearance", "shop.v1.waive", catalogue.Steps{Grants: true},
			"declares approval MODE_GRANT without approver_min_clearance; no approver's clearance is allowed against an unspecified one, so no grant could ever verify"},
		{"MODE_NOTIFY without --notify", "shop.v1.cancel", catalogue.Steps{Grants: true, AuditRetention: retention(0)},
			"declares approval MODE_NOTIFY, which needs notification (step 10), and --notify is off"},
		{"MODE_NOTIFY with --notify", "shop.v1.cancel", catalogue.Steps{Notify: true}, ""},
		{"LEVEL_AUDIT without an audit sink", "shop.v1.export", catalogue.Steps{Grants: true, Notify: true},
			"declares LEVEL_AUDIT with retain_days 30, which needs an audit sink, and none is configured (--audit-stream-retention)"},
		{"LEVEL_AUDIT with an indefinite sink", "shop.v1.export", catalogue.Steps{AuditRetention: retention(0)}, ""},
		{"LEVEL_AUDIT with a sink keeping exactly retain_days", "shop.v1.export", catalogue.Steps{AuditRetention: retention(30 * day)}, ""},
		{"LEVEL_AUDIT with a sink keeping longer", "shop.v1.export", catalogue.Steps{AuditRetention: retention(365 * day)}, ""},
		{"LEVEL_AUDIT with a sink keeping a day too little", "shop.v1.export", catalogue.Steps{AuditRetention: retention(29 * day)},
			"declares LEVEL_AUDIT with retain_days 30, and the audit stream's asserted retention 696h0m0s does not cover it (--audit-stream-retention must be 0, indefinite, or at least 720h)"},
		{"LEVEL_AUDIT with a negative retention", "shop.v1.export", catalogue.Steps{AuditRetention: retention(-time.Second)},
			"declares LEVEL_AUDIT with retain_days 30, and the audit stream's asserted retention -1s does not cover it"},
		{"fail_closed without LEVEL_AUDIT, everything on", "shop.v1.peek", catalogue.Steps{Grants: true, Notify: true, AuditRetention: retention(0)},
			"declares fail_closed at LEVEL_LEDGER; fail_closed needs LEVEL_AUDIT, the only level with a write-ahead to fail on"},
		{"the reserved listing path, everything on", "garm.v1.list_tools_shadow", catalogue.Steps{Grants: true, Notify: true, AuditRetention: retention(0)},
			"is declared at /garm.v1.ToolCatalogService/ListTools, the path garmd answers with its own listing; no tool is served there"},
		{"a card as the whole answer", "shop.v1.card", catalogue.Steps{}, ""},
		{"a card two messages down", "shop.v1.receipt", catalogue.Steps{}, ""},
		{"cards as map values", "shop.v1.shelf", catalogue.Steps{}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.rule, func(t *testing.T) {
			got := problemsOf(t, catalogue.Mount(g, tc.steps), tc.tool)
			switch {
			case tc.refuse == "" && len(got) > 0:
				t.Fatalf("refused: %q", got)
			case tc.refuse != "" && (len(got) != 1 || !strings.HasPrefix(got[0], "tool "+tc.tool+" "+tc.refuse)):
				t.Fatalf("problems %q, want one starting %q", got, "tool "+tc.tool+" "+tc.refuse)
			}
		})
	}
	for _, tc := range []struct{ tool, refuse string }{
		{"later.v1.ask", "declares approval mode 7, which this build of garmd does not know how to enforce"},
		{"later.v1.keep", "declares audit level 9, which this build of garmd does not know how to enforce"},
	} {
		everything := catalogue.Steps{Grants: true, Notify: true, AuditRetention: retention(0)}
		if got := problemsOf(t, catalogue.Mount(future, everything), tc.tool); len(got) != 1 || got[0] != "tool "+tc.tool+" "+tc.refuse {
			t.Errorf("problems %q, want %q", got, tc.refuse)
		}
	}
}

func TestARefusedMountListsEveryProblemAtOnceInToolOrder(t *testing.T) {
	g := cataloguetest.Load(t, mountFixture)
	err := catalogue.Mount(g, catalogue.Steps{})
	var m *deny.Misconfigured
	if !errors.As(err, &m) {
		t.Fatalf("got %v", err)
	}
	var tools []string
	for _, p := range m.Problems {
		tools = append(tools, strings.Fields(p)[1])
	}
	want := []string{"garm.v1.list_tools_shadow", "shop.v1.cancel", "shop.v1.export", "shop.v1.peek", "shop.v1.refund", "shop.v1.waive"}
	if strings.Join(tools, " ") != strings.Join(want, " ") {
		t.Fatalf("problems name %v, want %v", tools, want)
	}
	if !strings.Contains(err.Error(), "; ") {
		t.Fatalf("the error does not join the problems: %q", err)
	}
}

func TestTheCalculatorMountsWithNoOptionalStep(t *testing.T) {
	g := cataloguetest.Load(t, "../../../examples/calculator/proto")
	if err := catalogue.Mount(g, catalogue.Steps{}); err != nil {
		t.Fatal(err)
	}
}

func TestAValidationRuleThatDoesNotCompileRefusesTheCatalogue(t *testing.T) {
	g := cataloguetest.Load(t, "testdata/badrules")
	got := problemsOf(t, catalogue.Mount(g, catalogue.Steps{}), "bad.v1.check")
	if len(got) != 1 || !strings.HasPrefix(got[0], "tool bad.v1.check has validation rules on bad.v1.CheckRequest that do not compile") {
		t.Fatalf("problems %q", got)
	}
	if g.Validator() != nil {
		t.Error("a refused generation holds a validator")
	}
}

func TestAMountedGenerationHasItsValidator(t *testing.T) {
	g := cataloguetest.Load(t, "../../../examples/calculator/proto")
	if g.Validator() != nil {
		t.Fatal("a generation has a validator before it is mounted")
	}
	if err := catalogue.Mount(g, catalogue.Steps{}); err != nil {
		t.Fatal(err)
	}
	if g.Validator() == nil {
		t.Fatal("a mounted generation has no validator")
	}
}
