package diff

import (
	"math"
	"slices"
	"strings"

	"github.com/garm-dev/garm/catalogue-builder/internal/inspect"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// requirement ranks a clearance used as a requirement (a tool's minimum, a
// field's read or write, an approver's floor): the higher, the fewer
// callers meet it. allows(have, need) is false whenever need is
// UNSPECIFIED (design 3.2), so UNSPECIFIED is met by no one and ranks above
// every level; the others rank by number, including levels a newer
// vocabulary inserts between them.
func requirement(c toolv1.Clearance) int {
	if c == toolv1.Clearance_CLEARANCE_UNSPECIFIED {
		return math.MaxInt
	}
	return int(c)
}

// approvalStrength ranks an approval mode, and says whether the mode is
// one this build knows. UNSPECIFIED and NONE both put no human in the
// loop, so they are equally weak.
func approvalStrength(m toolv1.ToolPolicy_Approval_Mode) (int, bool) {
	switch m {
	case toolv1.ToolPolicy_Approval_MODE_UNSPECIFIED, toolv1.ToolPolicy_Approval_MODE_NONE:
		return 0, true
	case toolv1.ToolPolicy_Approval_MODE_NOTIFY:
		return 1, true
	case toolv1.ToolPolicy_Approval_MODE_GRANT:
		return 2, true
	}
	return 0, false
}

// auditStrength ranks an audit level, and says whether the level is one
// this build knows. UNSPECIFIED reads as LEDGER (design 3.1).
func auditStrength(l toolv1.ToolPolicy_Audit_Level) (int, bool) {
	switch l {
	case toolv1.ToolPolicy_Audit_LEVEL_UNSPECIFIED, toolv1.ToolPolicy_Audit_LEVEL_LEDGER:
		return 0, true
	case toolv1.ToolPolicy_Audit_LEVEL_AUDIT:
		return 1, true
	}
	return 0, false
}

// strength is the direction of a move between two ranked values where a
// higher rank is stricter, or false when they rank the same.
func strength(old, new int) (Direction, bool) {
	switch {
	case new < old:
		return Widening, true
	case new > old:
		return Narrowing, true
	}
	return 0, false
}

// audiences is the set of audiences a tool is listed to, as names: no
// declaration and UNSPECIFIED both read as AGENT (design 3.1).
func audiences(declared []toolv1.Audience) []string {
	var out []string
	for _, a := range declared {
		if a == toolv1.Audience_AUDIENCE_UNSPECIFIED {
			a = toolv1.Audience_AUDIENCE_AGENT
		}
		out = append(out, name(a))
	}
	if len(out) == 0 {
		out = []string{name(toolv1.Audience_AUDIENCE_AGENT)}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// name spells an enum value as inspect does.
func name(e protoreflect.Enum) string { return inspect.EnumName(e) }

// label is a clearance with the compartments that go with it:
// "CONFIDENTIAL" or "CONFIDENTIAL with compartments finance, pii".
func label(c toolv1.Clearance, compartments []string) string {
	s := name(c)
	names := slices.Compact(slices.Sorted(slices.Values(compartments)))
	switch len(names) {
	case 0:
		return s
	case 1:
		return s + " with compartment " + names[0]
	}
	return s + " with compartments " + strings.Join(names, ", ")
}
