package instance

import (
	"reflect"
	"slices"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

// Principal is what garmd knows of a verified caller: the facts a View binds.
type Principal struct {
	Subject   string
	Tenant    string // bound only when not empty
	Clearance toolv1.Clearance
	// Compartments is bound always (a caller may hold none), as a set.
	Compartments []string
	Delegated    bool
	Agent        string // bound only when Delegated
	// Attrs holds the folded attributes by name: string, int64, bool or
	// []string. One is bound only when it is declared and its value has the
	// declared type; garmd's token reader has already judged its bounds.
	Attrs map[string]any
}

// View is a principal's variables, boxed once as CEL values, with lists held
// as sets. Build it once per verified principal and catalogue generation and
// share it: it is immutable.
type View struct {
	vars map[string]ref.Val
}

// NewView binds p's values: a variable with no value is left unbound, so a
// rule reading it fails.
func (e *Env) NewView(p Principal) *View {
	v := &View{vars: make(map[string]ref.Val, 6+len(p.Attrs))}
	v.vars[varSubject] = types.String(p.Subject)
	if p.Tenant != "" {
		v.vars[varTenant] = types.String(p.Tenant)
	}
	if p.Clearance != toolv1.Clearance_CLEARANCE_UNSPECIFIED {
		v.vars[varClearance] = types.Int(p.Clearance)
	}
	v.vars[varCompartments] = NewSet(p.Compartments)
	v.vars[varDelegated] = types.Bool(p.Delegated)
	if p.Delegated && p.Agent != "" {
		v.vars[varAgent] = types.String(p.Agent)
	}
	for name, value := range p.Attrs {
		a, ok := e.attrs[name]
		if !ok {
			continue
		}
		switch x := value.(type) {
		case string:
			if a.GetType() == toolv1.Attribute_TYPE_STRING {
				v.vars[attrPrefix+name] = types.String(x)
			}
		case int64:
			if a.GetType() == toolv1.Attribute_TYPE_INT {
				v.vars[attrPrefix+name] = types.Int(x)
			}
		case bool:
			if a.GetType() == toolv1.Attribute_TYPE_BOOL {
				v.vars[attrPrefix+name] = types.Bool(x)
			}
		case []string:
			if a.GetType() == toolv1.Attribute_TYPE_STRING_LIST {
				v.vars[attrPrefix+name] = NewSet(x)
			}
		}
	}
	return v
}

// Bound reports whether the view binds the variable name
// ("principal.attrs.accounts").
func (v *View) Bound(name string) bool {
	_, ok := v.vars[name]
	return ok
}

// Set is a CEL list of distinct strings whose membership test is a map
// lookup. It behaves as a list everywhere else (size, iteration in sorted
// order, equality), so a rule means the same as with CEL's own lists.
type Set struct {
	traits.Lister
	members map[string]struct{}
}

// NewSet holds the distinct members of items.
func NewSet(items []string) *Set {
	members := make(map[string]struct{}, len(items))
	for _, s := range items {
		members[s] = struct{}{}
	}
	sorted := make([]string, 0, len(members))
	for s := range members {
		sorted = append(sorted, s)
	}
	slices.Sort(sorted)
	return &Set{Lister: types.NewStringList(types.DefaultTypeAdapter, sorted), members: members}
}

// Contains is membership: true for a member, false for anything else.
func (s *Set) Contains(v ref.Val) ref.Val {
	str, ok := v.(types.String)
	if !ok {
		return types.False
	}
	_, in := s.members[string(str)]
	return types.Bool(in)
}

// ConvertToNative is the Lister's, for a []string among others.
func (s *Set) ConvertToNative(t reflect.Type) (any, error) { return s.Lister.ConvertToNative(t) }
