package compile

import (
	"regexp"

	"github.com/garm-dev/garm/internal/didyoumean"
)

// declNamePattern is what a compartment or tool-set name must match (at most
// 63 characters, checked apart).
var declNamePattern = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)

// maxDeclNameLen is the longest compartment or tool-set name.
const maxDeclNameLen = 63

// MaxCompartments is how many compartments one catalogue may declare:
// garmd numbers them as bits of one word.
const MaxCompartments = 64

// taxonomy checks the declarations themselves: L28 (format), L29 (one name,
// two descriptions) and L7's ceiling on compartments.
func (l *linter) taxonomy() {
	l.declarations("compartment", l.model.Compartments)
	l.declarations("tool set", l.model.ToolSets)
	names := map[string]bool{}
	for _, d := range l.model.Compartments {
		if names[d.Name] {
			continue
		}
		names[d.Name] = true
		if len(names) == MaxCompartments+1 {
			l.report(Error, "L7", d.File, "compartment %q is the %dth declared; a catalogue declares at most %d", d.Name, MaxCompartments+1, MaxCompartments)
		}
	}
}

func (l *linter) declarations(kind string, decls []Declared) {
	first := map[string]Declared{}
	for _, d := range decls {
		if len(d.Name) > maxDeclNameLen || !declNamePattern.MatchString(d.Name) {
			l.report(Error, "L28", d.File, "%s name %q does not match %s (at most %d characters)", kind, d.Name, declNamePattern, maxDeclNameLen)
		}
		prev, seen := first[d.Name]
		switch {
		case !seen:
			first[d.Name] = d
		case prev.Description != d.Description:
			l.report(Error, "L29", d.File, "%s %q is declared with a different description in %s", kind, d.Name, prev.File)
		}
	}
}

// compartmentDeclared reports whether some file declares the compartment.
func (l *linter) compartmentDeclared(name string) bool {
	if l.compartments == nil {
		l.compartments = declaredNames(l.model.Compartments)
	}
	return l.compartments[name]
}

// toolSetDeclared reports whether some file declares the tool set.
func (l *linter) toolSetDeclared(name string) bool {
	if l.toolSets == nil {
		l.toolSets = declaredNames(l.model.ToolSets)
	}
	return l.toolSets[name]
}

func declaredNames(decls []Declared) map[string]bool {
	names := make(map[string]bool, len(decls))
	for _, d := range decls {
		names[d.Name] = true
	}
	return names
}

// compartmentUsed is L7 for one use of a compartment name at path.
func (l *linter) compartmentUsed(path, what, name string) {
	if !l.compartmentDeclared(name) {
		l.report(l.scope.severity(), "L7", path, "%s %q is not declared in any file%s%s", what, name, l.compartmentHint(name), l.scope.suffix())
	}
}

// compartmentHint names the declared compartment closest to an undeclared
// name, "" when none is close.
func (l *linter) compartmentHint(name string) string {
	names := make([]string, 0, len(l.model.Compartments))
	for _, d := range l.model.Compartments {
		names = append(names, d.Name)
	}
	return didyoumean.Hint(name, names)
}
