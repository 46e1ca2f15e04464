// Package didyoumean finds the declared name closest to a misspelt one, so
// that a message refusing an undeclared name can say which was meant. Every
// message of garm that names an undeclared compartment uses it — the
// generator's lint, the catalogue build and the dev plane's personas check —
// rather than each keeping its own copy.
//
// It only suggests: it never accepts a name that is not declared, and it
// says nothing when no declared name is close (within a third of the name's
// length in single-character edits, at least one).
package didyoumean
