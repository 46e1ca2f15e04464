package compile

import (
	"regexp"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/protoc-gen-garm/compile/instance"
)

// attributeNamePattern is what an attribute's name must match: it is read
// as principal.attrs.<name>.
var attributeNamePattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,62}$`)

// AttributeProblem is what is wrong with one attribute declaration on its
// own, or "" when nothing is.
func AttributeProblem(a *toolv1.Attribute) string {
	var problems []string
	if !attributeNamePattern.MatchString(a.GetName()) {
		problems = append(problems, "its name does not match "+attributeNamePattern.String())
	}
	if strings.TrimSpace(a.GetDescription()) == "" {
		problems = append(problems, "it needs a description")
	}
	list := a.GetType() == toolv1.Attribute_TYPE_STRING_LIST
	switch {
	case a.GetType() == toolv1.Attribute_TYPE_UNSPECIFIED:
		problems = append(problems, "it needs a type")
	case toolv1.Attribute_Type_name[int32(a.GetType())] == "":
		problems = append(problems, "its type is not one this build knows")
	case list && a.GetMaxItems() == 0:
		problems = append(problems, "a TYPE_STRING_LIST needs max_items > 0")
	case !list && a.GetMaxItems() != 0:
		problems = append(problems, "only a TYPE_STRING_LIST takes max_items")
	}
	if a.GetMaxLen() != 0 && a.GetType() != toolv1.Attribute_TYPE_STRING && !list {
		problems = append(problems, "only string types take max_len")
	}
	return strings.Join(problems, "; ")
}

// DeclaredAttributes is the catalogue's attributes: for each name, its first
// declaration in file order, when that declaration is sound; sorted by name.
// Lint reports the rest.
func (m *Model) DeclaredAttributes() []*toolv1.Attribute {
	seen := map[string]bool{}
	var out []*toolv1.Attribute
	for _, d := range m.Attributes {
		if seen[d.Attribute.GetName()] {
			continue
		}
		seen[d.Attribute.GetName()] = true
		if AttributeProblem(d.Attribute) == "" {
			out = append(out, proto.CloneOf(d.Attribute))
		}
	}
	slices.SortFunc(out, func(a, b *toolv1.Attribute) int { return strings.Compare(a.GetName(), b.GetName()) })
	return out
}

// InstanceEnv is the environment instance rules of this model are compiled
// in: its sound attribute declarations and the number of compartments it
// declares. Built once.
func (m *Model) InstanceEnv() (*instance.Env, error) {
	m.instanceOnce.Do(func() {
		m.instanceEnv, m.instanceErr = instance.NewEnv(instance.Declarations{
			Attributes:   m.DeclaredAttributes(),
			Compartments: len(declaredNames(m.Compartments)),
		})
	})
	return m.instanceEnv, m.instanceErr
}
