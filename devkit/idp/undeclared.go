package idp

import (
	"fmt"
	"maps"
	"slices"

	"github.com/garm-dev/garm/internal/didyoumean"
)

// UndeclaredCompartments lists, one sentence each and sorted, the
// compartments p's roles name that declared (a catalogue's compartments)
// does not, with the closest declared name when one is near. garmd drops
// such a compartment from every token, so a persona silently lacks it: a
// dev plane says so when it starts rather than at the first refused call.
func (p *Personas) UndeclaredCompartments(declared []string) []string {
	known := map[string]bool{}
	for _, d := range declared {
		known[d] = true
	}
	var problems []string
	for _, name := range slices.Sorted(maps.Keys(p.Roles)) {
		for _, c := range p.Roles[name].Compartments {
			if !known[c] {
				problems = append(problems, fmt.Sprintf("role %q names compartment %q, which the catalogue does not declare%s; tokens carry it to garmd, which drops it",
					name, c, didyoumean.Hint(c, declared)))
			}
		}
	}
	return problems
}
