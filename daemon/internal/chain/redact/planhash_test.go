package redact

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"google.golang.org/protobuf/proto"
)

const (
	confidential = toolv1.Clearance_CLEARANCE_CONFIDENTIAL
	restricted   = toolv1.Clearance_CLEARANCE_RESTRICTED
)

func omit() *toolv1.Redaction {
	return &toolv1.Redaction{Kind: &toolv1.Redaction_Omit_{Omit: &toolv1.Redaction_Omit{}}}
}

func mask(with string) *toolv1.Redaction {
	return &toolv1.Redaction{Kind: &toolv1.Redaction_Mask_{Mask: &toolv1.Redaction_Mask{With: with}}}
}

func denied(path string, read toolv1.Clearance, onDeny *toolv1.Redaction, compartments ...string) *planv1.FieldRule {
	return &planv1.FieldRule{Path: path, Read: read, Compartments: compartments, OnDeny: onDeny}
}

func TestNothingDeniedHasNoPlanAddress(t *testing.T) {
	if got := planAddress(nil); got != "" {
		t.Fatalf("an empty plan's address is %q", got)
	}
}

func TestThePlanAddressHashesTheDocumentedEncoding(t *testing.T) {
	rules := []*planv1.FieldRule{
		denied("billing", confidential, omit(), "financial"),
		denied("contacts.email", confidential, mask("x"), "pii"),
	}
	// Written out by hand from planAddress's documentation.
	encoding := "garm.redaction_plan.v1\n" +
		"\x07billing" + "\x1e" + "\x01" + "\x09financial" +
		"\x01" + "\x01" + ("\x00" + "\x00") + "\x00" + // Redaction{omit (1): Omit{}}
		"\x0econtacts.email" + "\x1e" + "\x01" + "\x03pii" +
		"\x01" + "\x02" + ("\x01" + "\x01" + "\x01x" + "\x00") + "\x00" // Redaction{mask (2): Mask{with (1): "x"}}
	sum := sha256.Sum256([]byte(encoding))
	if got, want := planAddress(rules), hex.EncodeToString(sum[:8]); got != want {
		t.Fatalf("planAddress = %s, the documented encoding hashes to %s", got, want)
	}
}

func TestEveryPartOfADeniedRuleMovesThePlanAddress(t *testing.T) {
	base := func() []*planv1.FieldRule {
		return []*planv1.FieldRule{
			denied("billing", confidential, omit(), "financial"),
			denied("contacts.email", confidential, mask("x"), "pii"),
		}
	}
	variants := map[string]func(rules []*planv1.FieldRule) []*planv1.FieldRule{
		"the base":         func(r []*planv1.FieldRule) []*planv1.FieldRule { return r },
		"a path":           func(r []*planv1.FieldRule) []*planv1.FieldRule { r[0].Path = "billing_summary"; return r },
		"a read clearance": func(r []*planv1.FieldRule) []*planv1.FieldRule { r[0].Read = restricted; return r },
		"a compartment more": func(r []*planv1.FieldRule) []*planv1.FieldRule {
			r[0].Compartments = []string{"financial", "pii"}
			return r
		},
		"no compartment":               func(r []*planv1.FieldRule) []*planv1.FieldRule { r[0].Compartments = nil; return r },
		"a compartment renamed":        func(r []*planv1.FieldRule) []*planv1.FieldRule { r[0].Compartments = []string{"finance"}; return r },
		"an arm of another kind":       func(r []*planv1.FieldRule) []*planv1.FieldRule { r[0].OnDeny = mask(""); return r },
		"an arm's parameter":           func(r []*planv1.FieldRule) []*planv1.FieldRule { r[1].OnDeny = mask("y"); return r },
		"no arm at all":                func(r []*planv1.FieldRule) []*planv1.FieldRule { r[0].OnDeny = nil; return r },
		"the rules in the other order": func(r []*planv1.FieldRule) []*planv1.FieldRule { return []*planv1.FieldRule{r[1], r[0]} },
		"one rule fewer":               func(r []*planv1.FieldRule) []*planv1.FieldRule { return r[:1] },
		// Length prefixes keep a name from running into the next one.
		"a path absorbing a compartment": func(r []*planv1.FieldRule) []*planv1.FieldRule {
			r[0].Path, r[0].Compartments = "billingfinancial", nil
			return r
		},
		"two compartments written as one": func(r []*planv1.FieldRule) []*planv1.FieldRule {
			r[1].Compartments = []string{"pi", "i"}
			return r
		},
	}
	seen := map[string]string{}
	for name, vary := range variants {
		got := planAddress(vary(base()))
		if other, ok := seen[got]; ok {
			t.Errorf("%q and %q share the address %s", name, other, got)
		}
		seen[got] = name
	}
}

func TestWhatACallerIsNotWithheldLeavesThePlanAddressAlone(t *testing.T) {
	rule := denied("billing", confidential, omit(), "financial")
	want := planAddress([]*planv1.FieldRule{rule})
	other := proto.Clone(rule).(*planv1.FieldRule)
	other.Write = restricted
	other.AuditOnRead = true
	other.Schema = `{"type":"object"}`
	other.Numbers = []int32{2}
	other.Required = true
	if got := planAddress([]*planv1.FieldRule{other}); got != want {
		t.Fatalf("write clearance, audit, schema, numbers or required moved the address: %s, want %s", got, want)
	}
}
