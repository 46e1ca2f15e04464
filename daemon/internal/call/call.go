package call

import (
	"time"

	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	celrule "github.com/garm-dev/garm/protoc-gen-garm/compile/instance"
	"github.com/garm-dev/garm/runtime/wire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Verbs is a set of verbs: holding one never implies another.
type Verbs uint8

// VerbsOf is the set of the given verbs; VERB_UNSPECIFIED and unknown numbers
// add nothing.
func VerbsOf(verbs ...toolv1.Verb) Verbs {
	var s Verbs
	for _, v := range verbs {
		if v > toolv1.Verb_VERB_UNSPECIFIED && v <= toolv1.Verb_VERB_DESTRUCTIVE {
			s |= 1 << v
		}
	}
	return s
}

// Has reports whether v is in the set.
func (s Verbs) Has(v toolv1.Verb) bool {
	return v > toolv1.Verb_VERB_UNSPECIFIED && v <= toolv1.Verb_VERB_DESTRUCTIVE && s&(1<<v) != 0
}

// List is the set's verbs in number order.
func (s Verbs) List() []toolv1.Verb {
	var out []toolv1.Verb
	for v := toolv1.Verb_VERB_READ; v <= toolv1.Verb_VERB_DESTRUCTIVE; v++ {
		if s.Has(v) {
			out = append(out, v)
		}
	}
	return out
}

// Allows is the lattice's clearance test (design 3.2), [wire.ClearanceAllows]:
// false when either side is unspecified, else have ≥ need. Every gate that compares clearances —
// tool visibility, field visibility and writability — calls this one.
func Allows(have, need toolv1.Clearance) bool {
	return wire.ClearanceAllows(have, need)
}

// Compartments is a set of compartments as bits numbered by one catalogue
// generation (at most compile.MaxCompartments, so they fit).
type Compartments uint64

// Covers reports whether the set holds every compartment of need.
func (c Compartments) Covers(need Compartments) bool { return need&^c == 0 }

// Shape is what per-caller caches are keyed by: everything a field's
// visibility or writability depends on (design 3.2). Two callers of one shape
// see the same fields.
type Shape struct {
	Clearance    toolv1.Clearance
	Compartments Compartments
}

// Reaches is design 3.2's field test for a caller of this shape: its
// clearance allows need and it holds every compartment of compartments.
// With a field's read label it is field visibility; with its write label,
// writability.
func (s Shape) Reaches(need toolv1.Clearance, compartments Compartments) bool {
	return Allows(s.Clearance, need) && s.Compartments.Covers(compartments)
}

// Label is an access label (design 3.2, 3.4): the clearance a reader needs
// and the compartments it must hold, numbered by one generation.
type Label struct {
	Clearance    toolv1.Clearance
	Compartments Compartments
}

// Tighter is the tighter of two labels (design 3.2): the higher clearance
// with the union of compartments.
func (l Label) Tighter(o Label) Label {
	return Label{Clearance: max(l.Clearance, o.Clearance), Compartments: l.Compartments | o.Compartments}
}

// Dominates reports whether l is at least as tight as o: a clearance at
// least o's (and specified) and every compartment of o.
func (l Label) Dominates(o Label) bool {
	return l.Clearance != toolv1.Clearance_CLEARANCE_UNSPECIFIED && l.Clearance >= o.Clearance &&
		l.Compartments.Covers(o.Compartments)
}

// ReachedBy reports whether a caller of shape reaches what l labels.
func (l Label) ReachedBy(s Shape) bool { return s.Reaches(l.Clearance, l.Compartments) }

// Actor is one hop of a delegation chain.
type Actor struct {
	Subject string
	Kind    toolv1.PrincipalKind
}

// Principal is the caller after step 1: its token's chain folded into one
// authority (design 7.5), numbered by the generation that serves the call.
type Principal struct {
	Subject string
	Kind    toolv1.PrincipalKind
	Tenant  string
	// JTI is the token's id, when it has one.
	JTI string

	// Clearance is the lowest clearance on the chain; never unspecified.
	Clearance toolv1.Clearance
	// Compartments is the intersection over the chain, restricted to the
	// names the generation declares; CompartmentNames lists them sorted.
	Compartments     Compartments
	CompartmentNames []string
	// Verbs is the intersection over the chain.
	Verbs Verbs
	// Scoped is false when no level of the chain names tool sets; then
	// ToolSets is empty and means nothing. When true, ToolSets is the
	// intersection of the scopes named (possibly empty: reaches nothing).
	Scoped   bool
	ToolSets map[string]bool

	// Act is the delegation chain without the subject, outermost first.
	Act []Actor
	// ExecutionSubject is the exec claim's sub: the runner executing the
	// call. Empty without an exec claim.
	ExecutionSubject string
	// Expiry is the token's exp.
	Expiry time.Time

	// Attrs are the declared principal attributes the chain holds, folded
	// (design 7.5, docs/decisions/0094): an attribute is here only when it
	// has a value — absent is not empty. nil when none.
	Attrs map[string]Attr
	// View is the principal as the serving generation's instance rules
	// read it, built once with the principal and cached with it; nil when
	// the generation has no rules.
	View *celrule.View
}

// Attr is one principal attribute's folded value, of the type its
// generation declares.
type Attr struct {
	Type toolv1.Attribute_Type
	// Exactly one of these is the value, as Type says.
	String string
	Int    int64
	Bool   bool
	// List is a TYPE_STRING_LIST value, sorted and distinct; an empty
	// list is a value (it holds nothing), not an absence.
	List []string
}

// Shape is the principal's cache key for field decisions.
func (p *Principal) Shape() Shape {
	return Shape{Clearance: p.Clearance, Compartments: p.Compartments}
}

// Depth is the number of levels of the chain: the subject and its actors.
func (p *Principal) Depth() int { return 1 + len(p.Act) }

// Agent is the innermost actor (design 7.4): under RFC 8693 nesting, the
// party the subject delegated to directly. Empty when nobody acts for the
// subject.
func (p *Principal) Agent() string {
	if len(p.Act) == 0 {
		return ""
	}
	return p.Act[len(p.Act)-1].Subject
}

// Tool is a tool as one catalogue generation serves it.
type Tool struct {
	FQN     string
	Name    string
	Package string
	Service string
	// Method is the route, "/<package>.<Service>/<Method>".
	Method string
	// Subject is the NATS subject the tool is served on.
	Subject string

	Verb         toolv1.Verb
	MinClearance toolv1.Clearance
	// Compartments are the tool's, numbered by its generation;
	// CompartmentNames lists them sorted.
	Compartments     Compartments
	CompartmentNames []string
	// Sets are the tool sets holding the tool, sorted.
	Sets []string

	Policy *toolv1.ToolPolicy
	Input  protoreflect.MessageDescriptor
	Output protoreflect.MessageDescriptor
	// InputPlan and OutputPlan are the catalogue's precomputed plans.
	InputPlan  *planv1.MessagePlan
	OutputPlan *planv1.MessagePlan
	// InputRuleCompartments[i] holds the compartments of InputPlan's rule i,
	// numbered by the generation; OutputRuleCompartments likewise.
	InputRuleCompartments  []Compartments
	OutputRuleCompartments []Compartments
	// CardFloor is the floor of any card in the tool's answer (design 7.8):
	// the tool's gate (min clearance and compartments) joined with the
	// output message's default read policy. A card deeper in the answer
	// also sits below the labels of the fields that enclose it.
	CardFloor Label
	// AnswersCards is whether a card is reachable in the tool's answer, so
	// card projection runs only for tools that can answer with one.
	AnswersCards bool
	// CardHolders are the message types in the tool's answer that are or
	// hold a card, computed once, so projection walks only into fields
	// that can lead to one; nil when the answer holds none.
	CardHolders map[protoreflect.FullName]bool
	// DescriptorHash is the wire-shape identity of the tool's package.
	DescriptorHash string
	// Index is the tool's position in its generation's table (sorted by
	// FQN), for per-tool caches held in slices.
	Index int
}
