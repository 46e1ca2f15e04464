package listing_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/catalogue/cataloguetest"
	"github.com/garm-dev/garm/daemon/internal/listing"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

// desk.v1.update_contact's input: id (INTERNAL), note (written at
// CONFIDENTIAL), contact (a message written at CONFIDENTIAL in pii, whose
// own fields are written at INTERNAL), vip (in vip) and idempotency_key
// (supplied by the runner).
func TestTheInputSchemaShowsOnlyWhatTheCallerMayWrite(t *testing.T) {
	g := cataloguetest.Load(t, deskFixture)
	writers := []toolv1.Verb{write}
	cases := []struct {
		name   string
		caller caller
		// properties are the top-level fields shown; contact lists
		// contact's own, when contact is shown.
		properties, contact, required []string
	}{
		{"an internal caller with no compartment writes only the id",
			caller{clearance: internal, verbs: writers}, []string{"id"}, nil, []string{"id"}},
		{"a compartment alone does not lift a clearance: contact stays denied with its subtree",
			caller{clearance: internal, verbs: writers, compartments: []string{"pii", "vip"}}, []string{"id", "vip"}, nil, []string{"id"}},
		{"clearance alone does not grant a compartment",
			caller{clearance: confidential, verbs: writers}, []string{"id", "note"}, nil, []string{"id"}},
		{"a confidential caller in pii writes the contact and everything under it",
			caller{clearance: confidential, verbs: writers, compartments: []string{"pii"}}, []string{"contact", "id", "note"}, []string{"email", "name"}, []string{"id"}},
		{"a caller who may write everything is still not shown the runner's field",
			everyone, []string{"contact", "id", "note", "vip"}, []string{"email", "name"}, []string{"id"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body, err := listing.New(listing.Options{}).List(g, tc.caller.principal(t, g), agent)
			if err != nil {
				t.Fatal(err)
			}
			s := decode(t, body).schemaOf(t, "desk.v1.update_contact")
			props, _ := s["properties"].(map[string]any)
			if got := slices.Sorted(maps.Keys(props)); !slices.Equal(got, tc.properties) {
				t.Fatalf("properties %v, want %v", got, tc.properties)
			}
			var contact []string
			if c, ok := props["contact"].(map[string]any); ok {
				contact = slices.Sorted(maps.Keys(c["properties"].(map[string]any)))
			}
			if !slices.Equal(contact, tc.contact) {
				t.Fatalf("contact's properties %v, want %v", contact, tc.contact)
			}
			var required []string
			for _, r := range s["required"].([]any) {
				required = append(required, r.(string))
			}
			if !slices.Equal(required, tc.required) {
				t.Fatalf("required %v, want %v", required, tc.required)
			}
			raw := string(decodeRaw(t, body, "desk.v1.update_contact"))
			if strings.Contains(raw, "idempotency_key") {
				t.Fatalf("the runner's field is named: %s", raw)
			}
			if tc.contact == nil && (strings.Contains(raw, `"email"`) || strings.Contains(raw, `"name"`)) {
				t.Fatalf("a field under a denied message is named: %s", raw)
			}
		})
	}
}

func decodeRaw(t *testing.T, body []byte, fqn string) []byte {
	t.Helper()
	for _, tool := range decode(t, body).Tools {
		if tool.FQN == fqn {
			return tool.InputSchema
		}
	}
	t.Fatalf("%s is not listed", fqn)
	return nil
}

func TestInputSchemaIsWhatTheListingServes(t *testing.T) {
	g := cataloguetest.Load(t, deskFixture)
	p := caller{clearance: confidential, verbs: []toolv1.Verb{write}, compartments: []string{"pii"}}.principal(t, g)
	body, err := listing.New(listing.Options{}).List(g, p, agent)
	if err != nil {
		t.Fatal(err)
	}
	tool := g.Route("/desk.v1.Desk/UpdateContact")
	direct, err := listing.InputSchema(tool, p.Shape())
	if err != nil {
		t.Fatal(err)
	}
	if string(direct) != string(decodeRaw(t, body, tool.FQN)) {
		t.Fatalf("InputSchema gives\n%s\nthe listing serves\n%s", direct, decodeRaw(t, body, tool.FQN))
	}
}

func TestARowCarriesTheToolsDeclarationsByName(t *testing.T) {
	g := cataloguetest.Load(t, deskFixture)
	body, err := listing.New(listing.Options{}).List(g, everyone.principal(t, g), agent)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range decode(t, body).Tools {
		if tool.FQN != "desk.v1.update_contact" {
			continue
		}
		if tool.Verb != "VERB_WRITE" || tool.ApprovalMode != "MODE_GRANT" || tool.Method != "/desk.v1.Desk/UpdateContact" ||
			!slices.Equal(tool.Sets, []string{"ops", "support"}) || !slices.Equal(tool.MaterialFields, []string{"id"}) || len(tool.Audience) != 0 || tool.Audience == nil ||
			tool.DistinctApprover == nil || !*tool.DistinctApprover {
			t.Fatalf("row %+v", tool)
		}
		return
	}
	t.Fatal("update_contact is not listed")
}
