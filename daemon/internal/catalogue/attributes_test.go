package catalogue_test

import (
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/catalogue/cataloguetest"
	cataloguev1 "github.com/garm-dev/garm/gen/garm/catalogue/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

func withAttributes(t *testing.T, attrs ...*toolv1.Attribute) []byte {
	t.Helper()
	return reencode(t, cataloguetest.Calculator(t), func(c *cataloguev1.Catalogue) { c.Attributes = attrs })
}

func TestAGenerationCarriesItsDeclaredAttributes(t *testing.T) {
	t.Parallel()
	g, err := catalogue.Load(withAttributes(t,
		&toolv1.Attribute{Name: "accounts", Description: "d", Type: toolv1.Attribute_TYPE_STRING_LIST, MaxItems: 64},
		&toolv1.Attribute{Name: "customer_id", Description: "d", Type: toolv1.Attribute_TYPE_STRING},
	), catalogue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := g.DeclaredAttribute("accounts"); d.GetMaxItems() != 64 {
		t.Fatalf("accounts declared as %v", d)
	}
	if g.DeclaredAttribute("customer_id") == nil || g.DeclaredAttribute("tenant") != nil {
		t.Fatalf("attributes %v", g.Attributes)
	}
	none := cataloguetest.Load(t, taxonomyFixture)
	if none.DeclaredAttribute("accounts") != nil {
		t.Fatal("a generation that declares no attribute has one")
	}
}

func TestAnAttributeDeclarationTheBuildWouldRefuseRefusesTheCatalogue(t *testing.T) {
	t.Parallel()
	list := toolv1.Attribute_TYPE_STRING_LIST
	cases := []struct {
		name  string
		attrs []*toolv1.Attribute
		want  string
	}{
		{"declared twice", []*toolv1.Attribute{{Name: "a", Description: "d", Type: toolv1.Attribute_TYPE_BOOL}, {Name: "a", Description: "d", Type: toolv1.Attribute_TYPE_INT}}, `declares attribute "a" twice`},
		{"no description", []*toolv1.Attribute{{Name: "a", Type: toolv1.Attribute_TYPE_BOOL}}, `attribute "a": it needs a description`},
		{"no type", []*toolv1.Attribute{{Name: "a", Description: "d"}}, `attribute "a": it needs a type`},
		{"an unknown type", []*toolv1.Attribute{{Name: "a", Description: "d", Type: 99}}, `attribute "a": its type is not one this build knows`},
		{"a list without max_items", []*toolv1.Attribute{{Name: "a", Description: "d", Type: list}}, `attribute "a": a TYPE_STRING_LIST needs max_items > 0`},
		{"max_items on a string", []*toolv1.Attribute{{Name: "a", Description: "d", Type: toolv1.Attribute_TYPE_STRING, MaxItems: 3}}, `attribute "a": only a TYPE_STRING_LIST takes max_items`},
		{"a bad name", []*toolv1.Attribute{{Name: "Accounts", Description: "d", Type: toolv1.Attribute_TYPE_BOOL}}, `attribute "Accounts": its name does not match`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := catalogue.Load(withAttributes(t, c.attrs...), catalogue.Options{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("load: %v, want %q", err, c.want)
			}
		})
	}
}
