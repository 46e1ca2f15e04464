package idp

import (
	"regexp"
	"strings"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

// Spellings are taken from the generated enums, so a level or verb added to the vocabulary is
// accepted here without a change.

// clearanceOf reads a clearance the way garmd reads the claim (design 7.5): bare or
// CLEARANCE_-prefixed, case-insensitive. UNSPECIFIED is never a valid caller value.
func clearanceOf(spelling string) (toolv1.Clearance, bool) {
	v, ok := enumValue(toolv1.Clearance_value, "CLEARANCE_", spelling)
	return toolv1.Clearance(v), ok
}

// verbOf reads a verb as garmd does: bare or VERB_-prefixed, case-insensitive.
func verbOf(spelling string) (toolv1.Verb, bool) {
	v, ok := enumValue(toolv1.Verb_value, "VERB_", spelling)
	return toolv1.Verb(v), ok
}

// kindOf reads a principal kind: USER, AGENT or SERVICE, PRINCIPAL_KIND_ prefix optional.
func kindOf(spelling string) (toolv1.PrincipalKind, bool) {
	v, ok := enumValue(toolv1.PrincipalKind_value, "PRINCIPAL_KIND_", spelling)
	return toolv1.PrincipalKind(v), ok
}

// enumValue looks a spelling up in a generated value map; the zero value (UNSPECIFIED) is
// refused as if unknown.
func enumValue(values map[string]int32, prefix, spelling string) (int32, bool) {
	name := strings.ToUpper(spelling)
	if !strings.HasPrefix(name, prefix) {
		name = prefix + name
	}
	v, ok := values[name]
	return v, ok && v != 0
}

// declName is the grammar of a declared compartment or tool-set name (design 3.1), checked here
// so a typo in the persona file fails at load rather than costing a caller a compartment
// silently at garmd.
var declName = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)

// maxDeclName is the longest declared name design 3.1 allows.
const maxDeclName = 63

func isDeclName(s string) bool { return len(s) <= maxDeclName && declName.MatchString(s) }

// handleName is the grammar of a persona handle or role name: it travels in a query string and
// in shell commands, so it is kept to characters that need no escaping.
var handleName = regexp.MustCompile(`^[a-z][a-z0-9._-]{0,62}$`)
