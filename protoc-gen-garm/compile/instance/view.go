package instance

import (
	"reflect"
	"slices"
	"strings"
	"sync"

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
// share it: it is immutable. A nil field is a variable with no value.
type View struct {
	subject, tenant, clearance, compartments, delegated, agent ref.Val
	// attrs are the attributes' values, indexed as env.attrIndex says.
	attrs []ref.Val
	env   *Env
}

// NewView binds p's values: a variable with no value is left unbound, so a
// rule reading it fails.
func (e *Env) NewView(p Principal) *View {
	v := e.NewPrincipalView(p)
	for name, value := range p.Attrs {
		switch x := value.(type) {
		case string:
			v.BindString(name, x)
		case int64:
			v.BindInt(name, x)
		case bool:
			v.BindBool(name, x)
		case []string:
			v.BindList(name, x)
		}
	}
	return v
}

// NewPrincipalView binds p's values but not p.Attrs, which the caller binds
// with the Bind methods, before it shares the view: garmd binds its typed
// attributes that way, without boxing each into p.Attrs first.
func (e *Env) NewPrincipalView(p Principal) *View {
	v := &View{env: e, subject: types.String(p.Subject), delegated: types.Bool(p.Delegated), compartments: NewSet(p.Compartments)}
	if p.Tenant != "" {
		v.tenant = types.String(p.Tenant)
	}
	if p.Clearance != toolv1.Clearance_CLEARANCE_UNSPECIFIED {
		v.clearance = types.Int(p.Clearance)
	}
	if p.Delegated && p.Agent != "" {
		v.agent = types.String(p.Agent)
	}
	return v
}

// bind sets attribute name to value when it is declared with type t.
func (v *View) bind(name string, t toolv1.Attribute_Type, value func() ref.Val) {
	i, ok := v.env.attrIndex[name]
	if !ok || v.env.decl.Attributes[i].GetType() != t {
		return
	}
	if v.attrs == nil {
		v.attrs = make([]ref.Val, len(v.env.decl.Attributes))
	}
	v.attrs[i] = value()
}

// BindString binds a declared string attribute; any other name is ignored.
func (v *View) BindString(name, s string) {
	v.bind(name, toolv1.Attribute_TYPE_STRING, func() ref.Val { return types.String(s) })
}

// BindInt binds a declared int attribute; any other name is ignored.
func (v *View) BindInt(name string, n int64) {
	v.bind(name, toolv1.Attribute_TYPE_INT, func() ref.Val { return types.Int(n) })
}

// BindBool binds a declared bool attribute; any other name is ignored.
func (v *View) BindBool(name string, b bool) {
	v.bind(name, toolv1.Attribute_TYPE_BOOL, func() ref.Val { return types.Bool(b) })
}

// BindList binds a declared string-list attribute as a set; any other name
// is ignored. An empty list binds (it holds nothing); it is not an absence.
func (v *View) BindList(name string, items []string) {
	v.bind(name, toolv1.Attribute_TYPE_STRING_LIST, func() ref.Val { return NewSet(items) })
}

// resolve is the value of the variable name, when bound.
func (v *View) resolve(name string) (ref.Val, bool) {
	var val ref.Val
	switch name {
	case varSubject:
		val = v.subject
	case varTenant:
		val = v.tenant
	case varClearance:
		val = v.clearance
	case varCompartments:
		val = v.compartments
	case varDelegated:
		val = v.delegated
	case varAgent:
		val = v.agent
	default:
		attr, ok := strings.CutPrefix(name, attrPrefix)
		if !ok || v.attrs == nil {
			return nil, false
		}
		i, ok := v.env.attrIndex[attr]
		if !ok {
			return nil, false
		}
		val = v.attrs[i]
	}
	return val, val != nil
}

// Bound reports whether the view binds the variable name
// ("principal.attrs.accounts").
func (v *View) Bound(name string) bool {
	_, ok := v.resolve(name)
	return ok
}

// Set is a CEL list of distinct strings whose membership test is a binary
// search of its sorted members (no map to build per principal: a view is
// built per verified token). It behaves as a list everywhere else (size,
// iteration in sorted order, equality), so a rule means the same as with
// CEL's own lists; that list is built the first time a rule uses the set
// as a list, not for every view.
type Set struct {
	sorted []string
	once   sync.Once
	list   traits.Lister
}

var _ traits.Lister = (*Set)(nil)

// NewSet holds the distinct members of items. Items already sorted and
// distinct (as garmd's token reader leaves a list) are held as they are,
// not copied: the caller must not change them afterwards.
func NewSet(items []string) *Set {
	sorted := items
	if !sortedDistinct(items) {
		sorted = slices.Clone(items)
		slices.Sort(sorted)
		sorted = slices.Compact(sorted)
	}
	return &Set{sorted: sorted}
}

func sortedDistinct(items []string) bool {
	for i := 1; i < len(items); i++ {
		if items[i-1] >= items[i] {
			return false
		}
	}
	return true
}

// Contains is membership: true for a member, false for anything else.
func (s *Set) Contains(v ref.Val) ref.Val {
	str, ok := v.(types.String)
	if !ok {
		return types.False
	}
	_, in := slices.BinarySearch(s.sorted, string(str))
	return types.Bool(in)
}

// Size is how many members the set holds.
func (s *Set) Size() ref.Val { return types.Int(len(s.sorted)) }

// lister is the set as CEL's own list of its sorted members.
func (s *Set) lister() traits.Lister {
	s.once.Do(func() { s.list = types.NewStringList(types.DefaultTypeAdapter, s.sorted) })
	return s.list
}

// The rest is the list's.

func (s *Set) Add(other ref.Val) ref.Val                   { return s.lister().Add(other) }
func (s *Set) Get(index ref.Val) ref.Val                   { return s.lister().Get(index) }
func (s *Set) Iterator() traits.Iterator                   { return s.lister().Iterator() }
func (s *Set) ConvertToNative(t reflect.Type) (any, error) { return s.lister().ConvertToNative(t) }
func (s *Set) ConvertToType(t ref.Type) ref.Val            { return s.lister().ConvertToType(t) }
func (s *Set) Equal(other ref.Val) ref.Val                 { return s.lister().Equal(other) }
func (s *Set) Type() ref.Type                              { return types.ListType }
func (s *Set) Value() any                                  { return s.lister().Value() }
