package idp

import (
	"strings"
	"testing"
)

func TestAMisspeltCompartmentInAPersonasRoleNamesTheClosestDeclared(t *testing.T) {
	t.Parallel()
	p := &Personas{Roles: map[string]Role{
		"books":  {Compartments: []string{"finnace"}},
		"sales":  {Compartments: []string{"marketing"}},
		"people": {Compartments: []string{"hr"}},
	}}
	got := p.UndeclaredCompartments([]string{"finance", "hr"})
	want := []string{
		`role "books" names compartment "finnace", which the catalogue does not declare (did you mean "finance"?); tokens carry it to garmd, which drops it`,
		`role "sales" names compartment "marketing", which the catalogue does not declare; tokens carry it to garmd, which drops it`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
