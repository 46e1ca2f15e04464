package visibility

import (
	"github.com/garm-dev/garm/daemon/internal/call"
)

// Gate names what hid a tool from a caller.
type Gate uint8

// The gates, in the order they are checked.
const (
	Visible Gate = iota
	Verb
	Clearance
	Compartments
	Scope
)

var gateNames = [...]string{
	Visible:      "visible",
	Verb:         "the caller does not hold the tool's verb",
	Clearance:    "the caller's clearance is below the tool's",
	Compartments: "the caller does not hold every compartment of the tool",
	Scope:        "the tool is in none of the caller's tool sets",
}

// String says what failed, for the ledger.
func (g Gate) String() string {
	if int(g) < len(gateNames) {
		return gateNames[g]
	}
	return "unknown gate"
}

// Check says whether p may see t, and if not, the first gate that hid it.
// Both must come from the same catalogue generation.
func Check(p *call.Principal, t *call.Tool) Gate {
	switch {
	case !p.Verbs.Has(t.Verb):
		return Verb
	case !call.Allows(p.Clearance, t.MinClearance):
		return Clearance
	case !p.Compartments.Covers(t.Compartments):
		return Compartments
	case p.Scoped && !sharesASet(p.ToolSets, t.Sets):
		return Scope
	}
	return Visible
}

func sharesASet(scope map[string]bool, sets []string) bool {
	for _, s := range sets {
		if scope[s] {
			return true
		}
	}
	return false
}
