package input

import (
	"fmt"
	"strings"
	"testing"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"github.com/garm-dev/garm/daemon/internal/call"
	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
)

// readsString renders reads for comparison: "*" for everything, else each
// path as dotted names ("" for this), "/…" when read whole.
func readsString(r *ruleReads) string {
	if r.everything {
		return "*"
	}
	parts := make([]string, 0, len(r.paths))
	for _, p := range r.paths {
		s := strings.Join(p.names, ".")
		if p.subtree {
			s += "/…"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

func TestAnalyseFindsWhatAnExpressionReadsOfThis(t *testing.T) {
	cases := []struct{ expr, reads string }{
		{"this.a.b > 0", "a.b/…"},
		{"has(this.a.b)", "a.b"},
		{"!has(this.limit) || this.quantity <= this.limit", "limit quantity/… limit/…"},
		{"this", "/…"},
		{"this.startsWith(' ')", "/…"},
		{"size(this.items) > 0", "items/…"},
		{"this.items.all(i, i.name != '')", "items/…"},
		{"this.labels['k'] == 'v'", "labels/…"},
		{"cel.bind(x, this.a, x.b)", "a/…"},
		{"now > timestamp('2020-01-01T00:00:00Z')", ""},
		{"rules.const == 3", ""},
		{"{'k': this.a}.k == [this.b][0]", "a/… b/…"},
		{"this.name != 'admin' ? '' : 'the name ' + this.name + ' is reserved'", "name/… name/…"},
		{"[1, 2].all(this, this > 0)", "*"},
		{"[1].map(x, this.a + x).size() > 0", "a/…"},
		{"this.(", "*"},
		{"", "*"},
	}
	for _, tc := range cases {
		t.Run(tc.expr, func(t *testing.T) {
			if got := readsString(analyse(tc.expr)); got != tc.reads {
				t.Errorf("reads %q, want %q", got, tc.reads)
			}
		})
	}
}

func TestAQuotedValueIsASubstringOrAWholeToken(t *testing.T) {
	values := &requestValues{substrings: []string{"Ada"}, tokens: []string{"100", "-5", "2.5", "STATUS_OPEN"}}
	cases := []struct {
		message string
		quoted  bool
	}{
		{"hello Ada", true},
		{"hello Adam", true},
		{"must be at most 100", true},
		{"must be at most 100.", true},
		{"(100)", true},
		{"must be at most 1000", false},
		{"version v100", false},
		{"must be 100.5 or less", false},
		{"must be 1.100 or less", false},
		{"must be 100_000", false},
		{"greater than -5", true},
		{"greater than 5", false},
		{"at least 2.5", true},
		{"at least 12.5", false},
		{"STATUS_OPEN is not allowed", true},
		{"STATUS_OPENED is not allowed", false},
		{"no value here", false},
		{"", false},
	}
	for _, tc := range cases {
		if got := values.quotedIn(tc.message); got != tc.quoted {
			t.Errorf("%q: quoted %t, want %t", tc.message, got, tc.quoted)
		}
	}
}

// shownPlan is a plan for the shown set: a message field with a hidden
// child, a list of messages, a leaf message, a runner-sourced key, and a
// field whose compartment bits do not match its rule.
var shownPlan = &planv1.MessagePlan{Message: "fix.Shown", Rules: []*planv1.FieldRule{
	{Path: "billing", Numbers: []int32{1}, Write: internal, Container: planv1.Container_CONTAINER_MESSAGE},
	{Path: "billing.iban", Numbers: []int32{1, 1}, Write: confidential, Container: planv1.Container_CONTAINER_LEAF},
	{Path: "billing.owner", Numbers: []int32{1, 2}, Write: internal, Container: planv1.Container_CONTAINER_LEAF},
	{Path: "items", Numbers: []int32{2}, Write: internal, Container: planv1.Container_CONTAINER_LIST_OF_MESSAGES},
	{Path: "items.name", Numbers: []int32{2, 1}, Write: internal, Container: planv1.Container_CONTAINER_LEAF},
	{Path: "when", Numbers: []int32{3}, Write: internal, Container: planv1.Container_CONTAINER_LEAF},
	{Path: "secret", Numbers: []int32{4}, Write: confidential, Container: planv1.Container_CONTAINER_MESSAGE},
	{Path: "secret.x", Numbers: []int32{4, 1}, Write: internal, Container: planv1.Container_CONTAINER_LEAF},
	{Path: "idempotency_key", Numbers: []int32{5}, Write: internal, RunnerSourced: true, Container: planv1.Container_CONTAINER_LEAF},
	{Path: "red", Numbers: []int32{6}, Write: internal, Compartments: []string{"red"}, Container: planv1.Container_CONTAINER_LEAF},
}}

// shownBits numbers no compartment for red, which names one: its bits do
// not match its rule, so it is hidden from everyone.
var shownBits = []call.Compartments{0, 0, 0, 0, 0, 0, 0, 0, 0, 0}

func TestTheShownSetIsTheListedInputSchema(t *testing.T) {
	cases := []struct {
		shape   call.Shape
		path    string
		subtree bool
		reached bool
	}{
		{low, "billing", false, true},
		{low, "billing", true, false},
		{low, "billing.owner", false, true},
		{low, "billing.iban", false, false},
		{high, "billing", true, true},
		{low, "items.name", true, true},
		{low, "items", true, true},
		{low, "when.seconds", false, true},
		{low, "billing.nothing", false, false},
		{low, "nothing", false, false},
		{high, "secret.x", false, true},
		{low, "secret.x", false, false},
		{high, "idempotency_key", false, false},
		{call.Shape{Clearance: confidential, Compartments: 1}, "red", false, false},
		{low, "", false, true},
		{high, "", true, false},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%v %s subtree=%t", tc.shape.Clearance, tc.path, tc.subtree), func(t *testing.T) {
			var names []string
			if tc.path != "" {
				names = strings.Split(tc.path, ".")
			}
			if got := resolveShown(shownPlan, shownBits, tc.shape).reaches(names, tc.subtree); got != tc.reached {
				t.Errorf("reached %t, want %t", got, tc.reached)
			}
		})
	}
}

var (
	low  = call.Shape{Clearance: internal}
	high = call.Shape{Clearance: confidential}
)

func TestARuleThatReadsEverythingIsListedOnlyWhenEverythingIsShown(t *testing.T) {
	all := &planv1.MessagePlan{Rules: shownPlan.GetRules()[:8]}
	if !resolveShown(all, shownBits, high).covers(nil, readsEverything) {
		t.Error("a caller shown every field was not shown a rule reading everything")
	}
	if resolveShown(all, shownBits, low).covers(nil, readsEverything) {
		t.Error("a caller not shown billing.iban was shown a rule reading everything")
	}
}

func TestLocateRendersIndexesAndHidesEveryMapKey(t *testing.T) {
	root := (&planv1.MessagePlan{}).ProtoReflect().Descriptor()
	rules := fieldElement(3, "rules")
	cases := []struct {
		name     string
		elements []*validate.FieldPathElement
		field    string
		names    string
		resolved bool
	}{
		{"the root", nil, "", "", true},
		{"a field", []*validate.FieldPathElement{fieldElement(1, "message")}, "message", "message", true},
		{"a list element's field", []*validate.FieldPathElement{indexed(rules, 2), fieldElement(1, "path")}, "rules[2].path", "rules.path", true},
		{"a map key of any kind", []*validate.FieldPathElement{keyed(rules, "k")}, "rules[*]", "rules", true},
		{"a number the message lacks", []*validate.FieldPathElement{fieldElement(99, "message")}, "message", "message", false},
		{"a name that is not the number's", []*validate.FieldPathElement{fieldElement(1, "schema")}, "schema", "schema", false},
		{"a path through a scalar", []*validate.FieldPathElement{fieldElement(1, "message"), fieldElement(1, "x")}, "message.x", "message.x", false},
		{"an unnamed oneof", []*validate.FieldPathElement{validate.FieldPathElement_builder{FieldName: new("nope")}.Build()}, "nope", "nope", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			at := locate(root, tc.elements)
			if at.field != tc.field || strings.Join(at.names, ".") != tc.names || at.resolved != tc.resolved {
				t.Errorf("located %q (%q, resolved %t), want %q (%q, %t)", at.field, at.names, at.resolved, tc.field, tc.names, tc.resolved)
			}
		})
	}
}

func fieldElement(n int32, name string) *validate.FieldPathElement {
	return validate.FieldPathElement_builder{FieldNumber: new(n), FieldName: new(name)}.Build()
}

func indexed(el *validate.FieldPathElement, i uint64) *validate.FieldPathElement {
	out := validate.FieldPathElement_builder{FieldNumber: new(el.GetFieldNumber()), FieldName: new(el.GetFieldName()), Index: new(i)}
	return out.Build()
}

func keyed(el *validate.FieldPathElement, key string) *validate.FieldPathElement {
	out := validate.FieldPathElement_builder{FieldNumber: new(el.GetFieldNumber()), FieldName: new(el.GetFieldName()), StringKey: new(key)}
	return out.Build()
}

func TestAMessageRuleIsAnalysedOncePerDescriptorAndId(t *testing.T) {
	c := NewChecker(16)
	md := (&planv1.MessagePlan{}).ProtoReflect().Descriptor()
	first := c.messageReads(md, "no.such.rule")
	if !first.everything {
		t.Errorf("a rule id the message does not declare reads %q, want everything", readsString(first))
	}
	if c.messageReads(md, "no.such.rule") != first {
		t.Error("the same rule was analysed twice")
	}
	if n := c.reads.Len(); n != 1 {
		t.Errorf("%d analyses cached, want 1", n)
	}
}
