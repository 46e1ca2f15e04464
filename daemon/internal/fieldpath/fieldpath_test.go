package fieldpath_test

import (
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/fieldpath"
	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

func TestPresentFindsAnyInstanceBelowTheMessage(t *testing.T) {
	cases := []struct {
		name    string
		message string
		numbers []int32
		want    bool
	}{
		{"a set string at the top", `{"leaf": "x"}`, []int32{leaf}, true},
		{"an unset string at the top", `{}`, []int32{leaf}, false},
		{"an integer without presence at zero", `{"count": 0}`, []int32{count}, false},
		{"an integer without presence set", `{"count": 3}`, []int32{count}, true},
		{"an empty message", `{"child": {}}`, []int32{child}, true},
		{"an empty list", `{"children": []}`, []int32{children}, false},
		{"an empty map", `{"byName": {}}`, []int32{byName}, false},
		{"a list of strings", `{"tags": ["t"]}`, []int32{tags}, true},
		{"a map of strings", `{"labels": {"k": "v"}}`, []int32{labels}, true},
		{"below a singular message", `{"child": {"leaf": "x"}}`, []int32{child, leaf}, true},
		{"not below an empty singular message", `{"child": {}}`, []int32{child, leaf}, false},
		{"in the second element of a list", `{"children": [{}, {"leaf": "y"}]}`, []int32{children, leaf}, true},
		{"in no element of a list", `{"children": [{}, {"count": 1}]}`, []int32{children, leaf}, false},
		{"in one value of a map", `{"byName": {"a": {}, "b": {"leaf": "z"}}}`, []int32{byName, leaf}, true},
		{"in no value of a map", `{"byName": {"a": {}, "b": {"count": 1}}}`, []int32{byName, leaf}, false},
		{"through a list, a map and a message", `{"children": [{}, {"byName": {"k": {"child": {"leaf": "d"}}}}]}`,
			[]int32{children, byName, child, leaf}, true},
		{"not through a list, a map and a message", `{"children": [{}, {"byName": {"k": {"child": {}}}}]}`,
			[]int32{children, byName, child, leaf}, false},
		{"below an unset field whose path resolves", `{}`, []int32{children, byName, child, leaf}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := tree(t, tc.message)
			before := proto.Clone(m.Interface())
			got, err := fieldpath.Present(m, tc.numbers)
			if err != nil || got != tc.want {
				t.Fatalf("present %v, error %v, want %v", got, err, tc.want)
			}
			if !proto.Equal(before, m.Interface()) {
				t.Errorf("the message changed: %v, was %v", m, before)
			}
		})
	}
}

// unresolvable are paths that do not resolve in fix.Tree, and the words
// the error names them by.
var unresolvable = []struct {
	name    string
	numbers []int32
	says    string
}{
	{"a number the message lacks", []int32{60}, "fix.Tree has no field 60"},
	{"a nested number the element lacks", []int32{children, 60}, "fix.Tree has no field 60"},
	{"a deep number the map value lacks", []int32{byName, child, 60}, "fix.Tree has no field 60"},
	{"a path going on through a string", []int32{leaf, 1}, "fix.Tree.leaf holds no message"},
	{"a path going on through a list of strings", []int32{tags, 1}, "fix.Tree.tags holds no message"},
	{"a path going on through a map of strings", []int32{labels, 1}, "fix.Tree.labels holds no message"},
	{"a path with no numbers", nil, "no field numbers"},
}

func TestAPathThatDoesNotResolveIsAnErrorWhateverTheMessageHolds(t *testing.T) {
	full := `{"leaf": "x", "child": {"leaf": "x"}, "children": [{"leaf": "x"}], "byName": {"k": {"child": {"leaf": "x"}}},
	  "tags": ["t"], "labels": {"k": "v"}, "count": 1}`
	for _, tc := range unresolvable {
		for name, message := range map[string]string{"empty": `{}`, "full": full} {
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				got, err := fieldpath.Present(tree(t, message), tc.numbers)
				if err == nil || got {
					t.Fatalf("present %v, error %v, want an error", got, err)
				}
				if !strings.Contains(err.Error(), tc.says) {
					t.Errorf("the error %q does not say %q", err, tc.says)
				}
			})
		}
	}
}

func TestResolvableChecksAPathWithoutAMessage(t *testing.T) {
	md := treeDescriptor(t)
	for _, numbers := range [][]int32{{}, {leaf}, {labels}, {child, leaf}, {children, byName, child, tags}} {
		if err := fieldpath.Resolvable(md, numbers); err != nil {
			t.Errorf("%v: %v", numbers, err)
		}
	}
	for _, tc := range unresolvable {
		if len(tc.numbers) == 0 {
			continue // an empty rest is what is left below a leaf: it resolves
		}
		t.Run(tc.name, func(t *testing.T) {
			if err := fieldpath.Resolvable(md, tc.numbers); err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("error %v, want one saying %q", err, tc.says)
			}
		})
	}
}

func TestStepResolvesTheFirstNumberAndWhetherThePathCanGoOn(t *testing.T) {
	md := treeDescriptor(t)
	cases := []struct {
		numbers []int32
		want    string // the field's name, or "" for an error
	}{
		{[]int32{leaf}, "leaf"},
		{[]int32{tags}, "tags"},
		{[]int32{child, 60}, "child"}, // only the first step is checked
		{[]int32{children, leaf}, "children"},
		{[]int32{byName, leaf}, "by_name"},
		{[]int32{leaf, 1}, ""},
		{[]int32{labels, 1}, ""},
		{[]int32{60}, ""},
		{nil, ""},
	}
	for _, tc := range cases {
		fd, err := fieldpath.Step(md, tc.numbers)
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("%v stepped to %s, want an error", tc.numbers, fd.FullName())
		case tc.want != "" && (err != nil || string(fd.Name()) != tc.want):
			t.Errorf("%v: %v, %v, want %s", tc.numbers, fd, err, tc.want)
		}
	}
}

func TestChildIsTheMessageAFieldsChildrenBelongTo(t *testing.T) {
	md := treeDescriptor(t)
	cases := []struct {
		number int32
		want   string // "" for none
	}{
		{child, "fix.Tree"},
		{children, "fix.Tree"},
		{byName, "fix.Tree"},
		{leaf, ""},
		{tags, ""},
		{labels, ""},
		{count, ""},
	}
	for _, tc := range cases {
		fd := md.Fields().ByNumber(protoreflect.FieldNumber(tc.number))
		got := fieldpath.Child(fd)
		switch {
		case tc.want == "" && got != nil:
			t.Errorf("%s has children of %s, want none", fd.Name(), got.FullName())
		case tc.want != "" && (got == nil || string(got.FullName()) != tc.want):
			t.Errorf("%s has children of %v, want %s", fd.Name(), got, tc.want)
		}
	}
}

func TestRuleCompartmentsFailClosedOnBitsThatDoNotMatchTheRule(t *testing.T) {
	const red, blue call.Compartments = 1 << 0, 1 << 1
	all := ^call.Compartments(0)
	plain := &planv1.FieldRule{Path: "a"}
	redRule := &planv1.FieldRule{Path: "b", Compartments: []string{"red"}}
	both := &planv1.FieldRule{Path: "c", Compartments: []string{"blue", "red"}}
	bits := []call.Compartments{0, red, red | blue}
	cases := []struct {
		name string
		bits []call.Compartments
		i    int
		rule *planv1.FieldRule
		want call.Compartments
	}{
		{"no compartments", bits, 0, plain, 0},
		{"one compartment", bits, 1, redRule, red},
		{"two compartments", bits, 2, both, red | blue},
		{"no bits at all", nil, 1, redRule, all},
		{"bits for fewer rules", bits[:1], 1, redRule, all},
		{"a negative index", bits, -1, plain, all},
		{"bits left zero for a rule that names one", []call.Compartments{0, 0}, 1, redRule, all},
		{"fewer bits than names", []call.Compartments{0, red, red}, 2, both, all},
		{"more bits than names", []call.Compartments{0, red | blue}, 1, redRule, all},
		{"bits for a rule that names none", []call.Compartments{red}, 0, plain, all},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := fieldpath.RuleCompartments(tc.bits, tc.i, tc.rule); got != tc.want {
				t.Fatalf("%b, want %b", got, tc.want)
			}
		})
	}
}

func TestBelowComparesPathsBySegmentAndStrictly(t *testing.T) {
	rules := func(paths ...[]int32) []*planv1.FieldRule {
		var out []*planv1.FieldRule
		for _, p := range paths {
			out = append(out, &planv1.FieldRule{Numbers: p})
		}
		return out
	}
	cases := []struct {
		name    string
		numbers []int32
		rules   []*planv1.FieldRule
		want    bool
	}{
		{"a child", []int32{1, 1}, rules([]int32{1}), true},
		{"a grandchild", []int32{1, 1, 1}, rules([]int32{1}), true},
		{"below the second rule", []int32{2, 1}, rules([]int32{1}, []int32{2}), true},
		{"the rule's own path", []int32{1}, rules([]int32{1}), false},
		{"above the rule", []int32{1}, rules([]int32{1, 1}), false},
		{"a number that extends the rule's", []int32{12}, rules([]int32{1}), false},
		{"below a number that extends the rule's", []int32{12, 1}, rules([]int32{1}), false},
		{"a sibling's child", []int32{1, 2, 1}, rules([]int32{1, 1}), false},
		{"no rules", []int32{1, 1}, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := fieldpath.Below(tc.numbers, tc.rules); got != tc.want {
				t.Fatalf("%v below %v: %v, want %v", tc.numbers, tc.rules, got, tc.want)
			}
		})
	}
}

func TestReadableWritableAndShownAreTheLatticesFieldTests(t *testing.T) {
	const red call.Compartments = 1 << 0
	const (
		public       = toolv1.Clearance_CLEARANCE_PUBLIC
		internal     = toolv1.Clearance_CLEARANCE_INTERNAL
		confidential = toolv1.Clearance_CLEARANCE_CONFIDENTIAL
	)
	rule := &planv1.FieldRule{Path: "a", Read: internal, Write: confidential, Compartments: []string{"red"}}
	runner := &planv1.FieldRule{Path: "k", Read: public, Write: public, RunnerSourced: true}
	bits := []call.Compartments{red, 0}
	cases := []struct {
		name                      string
		shape                     call.Shape
		i                         int
		rule                      *planv1.FieldRule
		bits                      []call.Compartments
		readable, writable, shown bool
	}{
		{"below read", call.Shape{Clearance: public, Compartments: red}, 0, rule, bits, false, false, false},
		{"reads, may not write", call.Shape{Clearance: internal, Compartments: red}, 0, rule, bits, true, false, false},
		{"reads and writes", call.Shape{Clearance: confidential, Compartments: red}, 0, rule, bits, true, true, true},
		{"cleared but missing the compartment", call.Shape{Clearance: confidential}, 0, rule, bits, false, false, false},
		{"bits that do not match fail closed", call.Shape{Clearance: confidential, Compartments: red}, 0, rule, []call.Compartments{0, 0}, false, false, false},
		{"an unspecified caller reaches nothing", call.Shape{Compartments: red}, 0, rule, bits, false, false, false},
		{"runner-sourced: writable, never shown", call.Shape{Clearance: confidential}, 1, runner, bits, true, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := fieldpath.Readable(tc.shape, tc.bits, tc.i, tc.rule)
			w := fieldpath.Writable(tc.shape, tc.bits, tc.i, tc.rule)
			s := fieldpath.Shown(tc.shape, tc.bits, tc.i, tc.rule)
			if r != tc.readable || w != tc.writable || s != tc.shown {
				t.Fatalf("readable %v writable %v shown %v, want %v %v %v", r, w, s, tc.readable, tc.writable, tc.shown)
			}
		})
	}
}
