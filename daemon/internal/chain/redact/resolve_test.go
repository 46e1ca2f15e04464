package redact_test

import (
	"fmt"
	"regexp"
	"slices"
	"sync"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/chain/redact"
	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"google.golang.org/protobuf/proto"
)

func paths(rules []*planv1.FieldRule) []string {
	out := []string{}
	for _, r := range rules {
		out = append(out, r.GetPath())
	}
	return out
}

var planAddress = regexp.MustCompile(`^[0-9a-f]{16}$`)

func TestEachShapeIsDeniedExactlyTheFieldsItMayNotRead(t *testing.T) {
	account := tool(t, "get_account")
	for _, tc := range shapeCases {
		t.Run(tc.name, func(t *testing.T) {
			res := redact.New(16, hashKey).Resolve(account.OutputPlan, account.OutputRuleCompartments, shapeOf(t, tc.clearance, tc.compartments...))
			if got, want := paths(res.Denied), tc.denied; !slices.Equal(got, want) {
				t.Errorf("denied %q, want %q", got, want)
			}
			if got, want := paths(res.Audited), tc.audited; !slices.Equal(got, want) {
				t.Errorf("audited %q, want %q", got, want)
			}
			switch {
			case len(tc.denied) == 0 && res.Plan != "":
				t.Errorf("nothing is denied, yet the plan address is %q", res.Plan)
			case len(tc.denied) > 0 && !planAddress.MatchString(res.Plan):
				t.Errorf("plan address %q is not 16 lowercase hex digits", res.Plan)
			}
		})
	}
}

func TestShapesDeniedDifferentFieldsHaveDifferentPlanAddresses(t *testing.T) {
	account := tool(t, "get_account")
	r := redact.New(16, hashKey)
	seen := map[string]string{}
	for _, tc := range shapeCases {
		plan := r.Resolve(account.OutputPlan, account.OutputRuleCompartments, shapeOf(t, tc.clearance, tc.compartments...)).Plan
		if other, ok := seen[plan]; ok {
			t.Errorf("%q and %q are denied different fields but share the plan address %q", other, tc.name, plan)
		}
		seen[plan] = tc.name
	}
}

func TestADeniedMessageTakesItsSubtreeButNotAFieldWhoseNameExtendsIt(t *testing.T) {
	account := tool(t, "get_account")
	r := redact.New(16, hashKey)
	// At INTERNAL billing and billing_summary are both denied: billing's
	// children go with it, billing_summary is a field of its own.
	denied := paths(r.Resolve(account.OutputPlan, account.OutputRuleCompartments, shapeOf(t, internal)).Denied)
	if !slices.Contains(denied, "billing") || !slices.Contains(denied, "billing_summary") {
		t.Errorf("billing and billing_summary should both be denied at INTERNAL: %q", denied)
	}
	for _, below := range []string{"billing.iban", "billing.holder"} {
		if slices.Contains(denied, below) {
			t.Errorf("%s is listed although billing, above it, is denied: %q", below, denied)
		}
	}
	// At CONFIDENTIAL without financial only billing is.
	denied = paths(r.Resolve(account.OutputPlan, account.OutputRuleCompartments, shapeOf(t, confidential)).Denied)
	if !slices.Contains(denied, "billing") || slices.Contains(denied, "billing_summary") {
		t.Errorf("billing alone should be denied at CONFIDENTIAL: %q", denied)
	}
}

func TestTheSameShapeGetsTheSameResolution(t *testing.T) {
	account := tool(t, "get_account")
	r := redact.New(16, hashKey)
	low := shapeOf(t, internal)
	first := r.Resolve(account.OutputPlan, account.OutputRuleCompartments, low)
	if again := r.Resolve(account.OutputPlan, account.OutputRuleCompartments, low); again != first {
		t.Error("the same plan and shape resolved twice gave two resolutions")
	}
	if other := r.Resolve(account.OutputPlan, account.OutputRuleCompartments, shapeOf(t, internal, "pii")); other == first {
		t.Error("another shape was given the first shape's resolution")
	}
	// An equal plan of another generation is another plan: the bits that
	// come with it were numbered by that generation.
	copied := proto.Clone(account.OutputPlan).(*planv1.MessagePlan)
	if other := r.Resolve(copied, account.OutputRuleCompartments, low); other == first {
		t.Error("another plan pointer was given the first plan's resolution")
	}
}

func TestAFullCacheForgetsAShapeAndResolvesItAgain(t *testing.T) {
	account := tool(t, "get_account")
	r := redact.New(1, hashKey)
	low, high := shapeOf(t, internal), shapeOf(t, restricted)
	first := r.Resolve(account.OutputPlan, account.OutputRuleCompartments, low)
	r.Resolve(account.OutputPlan, account.OutputRuleCompartments, high)
	again := r.Resolve(account.OutputPlan, account.OutputRuleCompartments, low)
	if again == first {
		t.Fatal("a cache of one kept two shapes")
	}
	if !slices.Equal(paths(again.Denied), paths(first.Denied)) || again.Plan != first.Plan {
		t.Fatal("resolving a forgotten shape again gave another answer")
	}
}

func TestARedactorThatCachesNothingStillResolves(t *testing.T) {
	account := tool(t, "get_account")
	r := redact.New(0, hashKey)
	low := shapeOf(t, internal)
	first := r.Resolve(account.OutputPlan, account.OutputRuleCompartments, low)
	again := r.Resolve(account.OutputPlan, account.OutputRuleCompartments, low)
	if first == again {
		t.Fatal("a cache of size zero kept a resolution")
	}
	if !slices.Equal(paths(first.Denied), shapeCases[0].denied) {
		t.Fatalf("denied %q, want %q", paths(first.Denied), shapeCases[0].denied)
	}
}

func TestCompartmentBitsThatDoNotMatchTheirRuleWithholdTheField(t *testing.T) {
	account := tool(t, "get_account")
	everything := shapeOf(t, restricted, "financial", "pii")
	nationalID := slices.IndexFunc(account.OutputPlan.GetRules(), func(r *planv1.FieldRule) bool { return r.GetPath() == "national_id" })
	cases := map[string][]call.Compartments{
		"no bits at all":          nil,
		"bits for fewer rules":    account.OutputRuleCompartments[:nationalID],
		"a rule's bits left zero": withBits(account.OutputRuleCompartments, nationalID, 0),
		"a rule's bits too many":  withBits(account.OutputRuleCompartments, nationalID, compartments(t, "financial", "pii")),
	}
	for name, bits := range cases {
		t.Run(name, func(t *testing.T) {
			res := redact.New(0, hashKey).Resolve(account.OutputPlan, bits, everything)
			if !slices.Contains(paths(res.Denied), "national_id") {
				t.Fatalf("national_id was shown with mismatched bits: denied %q", paths(res.Denied))
			}
		})
	}
}

func withBits(bits []call.Compartments, i int, b call.Compartments) []call.Compartments {
	out := slices.Clone(bits)
	out[i] = b
	return out
}

func TestResolvingManyShapesAtOnceAgreesWithResolvingEachAlone(t *testing.T) {
	account := tool(t, "get_account")
	shared := redact.New(3, hashKey) // smaller than the shapes used, so entries are evicted while read
	var wg sync.WaitGroup
	errs := make(chan error, 8*len(shapeCases))
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				tc := shapeCases[(g+i)%len(shapeCases)]
				shape := shapeOf(t, tc.clearance, tc.compartments...)
				got := shared.Resolve(account.OutputPlan, account.OutputRuleCompartments, shape)
				if !slices.Equal(paths(got.Denied), tc.denied) {
					errs <- fmt.Errorf("%s: denied %q under contention", tc.name, paths(got.Denied))
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestAPlanOfNoRulesDeniesNothing(t *testing.T) {
	res := redact.New(1, hashKey).Resolve(&planv1.MessagePlan{Message: "google.protobuf.Empty"}, nil, call.Shape{Clearance: toolv1.Clearance_CLEARANCE_PUBLIC})
	if len(res.Denied) != 0 || len(res.Audited) != 0 || res.Plan != "" {
		t.Fatalf("an empty plan resolved to %+v", res)
	}
}
