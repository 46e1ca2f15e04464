package card_test

import (
	"errors"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/chain/card"
	"github.com/garm-dev/garm/daemon/internal/deny"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"google.golang.org/protobuf/proto"
)

// conformance is design 7.8, one row per rule: an answer, a caller, and
// exactly what Project leaves — the projected answer with each card's
// withheld_fields, and the count — or exactly how it refuses.
var conformance = []struct {
	rule      string
	tool      string
	clearance toolv1.Clearance
	holds     []string
	in        string
	// want is the whole projected answer; withheld the count.
	want     string
	withheld uint32
	// invalid is the card_invalid detail; notFound the 404 for a card
	// answered whole. Either way the answer is left as it came.
	invalid  string
	notFound bool
}{
	{
		rule: "an unlabelled element is read at its card's floor: a caller at the floor reaches it",
		tool: "get_holder", clearance: confidential,
		in:   `{"card": {"title": "Acme", "body": [{"text": {"text": "hello"}}]}, "note": "n"}`,
		want: `{"card": {"title": "Acme", "body": [{"text": {"text": "hello"}}]}, "note": "n"}`,
	},
	{
		rule: "an unlabelled element is read at its card's floor, never at PUBLIC: a caller past the gate but below the floor loses it with its card",
		tool: "get_holder", clearance: internal,
		in:   `{"card": {"title": "Acme", "body": [{"text": {"text": "hello"}}]}, "note": "n"}`,
		want: `{"note": "n"}`, withheld: 1,
	},
	{
		rule: "a floor from the output's default policy holds its compartments",
		tool: "get_dossier", clearance: restricted,
		in:   `{"card": {"title": "Ann", "body": [{"text": {"text": "born 1970"}}]}}`,
		want: `{}`, withheld: 1,
	},
	{
		rule: "a caller holding the default policy's compartments reaches the card",
		tool: "get_dossier", clearance: confidential, holds: []string{"pii"},
		in:   `{"card": {"title": "Ann", "body": [{"text": {"text": "born 1970"}}]}}`,
		want: `{"card": {"title": "Ann", "body": [{"text": {"text": "born 1970"}}]}}`,
	},
	{
		rule: "an unlabelled element in a labelled section is read at the section's label",
		tool: "get_card", clearance: internal,
		in: `{"body": [{"text": {"text": "a"}},
			{"access": {"clearance": "CLEARANCE_CONFIDENTIAL"}, "section": {"title": "S", "elements": [{"text": {"text": "b"}}]}}]}`,
		want:     `{"body": [{"text": {"text": "a"}}], "disclosure": {"withheldFields": ["body[1]"]}}`,
		withheld: 1,
	},
	{
		rule: "a withheld element takes its subtree, which is not named",
		tool: "get_card", clearance: internal,
		in: `{"body": [{"access": {"clearance": "CLEARANCE_CONFIDENTIAL"}, "section": {"elements": [
			{"access": {"clearance": "CLEARANCE_RESTRICTED"}, "text": {"text": "r"}}, {"text": {"text": "c"}}]}}]}`,
		want:     `{"disclosure": {"withheldFields": ["body[0]"]}}`,
		withheld: 1,
	},
	{
		rule: "a label below its section's is invalid",
		tool: "get_card", clearance: restricted,
		in: `{"body": [{"text": {"text": "a"}},
			{"access": {"clearance": "CLEARANCE_CONFIDENTIAL"}, "section": {"elements": [{"access": {"clearance": "CLEARANCE_INTERNAL"}, "text": {"text": "b"}}]}}]}`,
		invalid: "the answer's card: body[1].section.elements[0]: label CLEARANCE_INTERNAL is below the enclosing CLEARANCE_CONFIDENTIAL",
	},
	{
		rule: "a label below the floor the endpoint gives its card is invalid",
		tool: "get_holder", clearance: restricted,
		in:      `{"card": {"body": [{"access": {"clearance": "CLEARANCE_INTERNAL"}, "text": {"text": "a"}}]}}`,
		invalid: "card at card: body[0]: label CLEARANCE_INTERNAL is below the enclosing CLEARANCE_CONFIDENTIAL",
	},
	{
		rule: "a card's own label below its floor is invalid",
		tool: "get_holder", clearance: restricted,
		in:      `{"card": {"access": {"clearance": "CLEARANCE_INTERNAL"}}}`,
		invalid: "card at card: access: label CLEARANCE_INTERNAL is below the floor CLEARANCE_CONFIDENTIAL",
	},
	{
		rule: "a label missing a compartment of its floor is invalid",
		tool: "get_dossier", clearance: restricted, holds: []string{"pii"},
		in:      `{"card": {"body": [{"access": {"clearance": "CLEARANCE_RESTRICTED", "compartments": ["finance"]}, "text": {"text": "a"}}]}}`,
		invalid: "card at card: body[0]: label CLEARANCE_RESTRICTED [finance] does not hold every compartment of the enclosing label",
	},
	{
		rule: "a fact's label below its element's is invalid",
		tool: "get_card", clearance: restricted,
		in:      `{"body": [{"access": {"clearance": "CLEARANCE_CONFIDENTIAL"}, "facts": {"facts": [{"label": "a", "access": {"clearance": "CLEARANCE_INTERNAL"}}]}}]}`,
		invalid: "the answer's card: body[0].facts.facts[0]: label CLEARANCE_INTERNAL is below the enclosing CLEARANCE_CONFIDENTIAL",
	},
	{
		rule: "a choice's label below its element's is invalid",
		tool: "get_card", clearance: restricted,
		in:      `{"body": [{"access": {"clearance": "CLEARANCE_CONFIDENTIAL"}, "input": {"choice": {"choices": [{"title": "a", "access": {"clearance": "CLEARANCE_PUBLIC"}}]}}}]}`,
		invalid: "the answer's card: body[0].input.choice.choices[0]: label CLEARANCE_PUBLIC is below the enclosing CLEARANCE_CONFIDENTIAL",
	},
	{
		rule: "a withheld fact is named by its field, or by its path when it has none; the rest of the card is untouched",
		tool: "get_card", clearance: internal,
		in: `{"kind": "KIND_RECORD", "subjectId": "acc-1", "title": "Account", "state": "STATE_OPEN",
			"body": [{"facts": {"facts": [
				{"label": "Name", "value": "Ann", "field": "account.name"},
				{"label": "IBAN", "value": "DE00", "field": "account.iban", "access": {"clearance": "CLEARANCE_CONFIDENTIAL"}},
				{"label": "Note", "value": "x", "access": {"clearance": "CLEARANCE_CONFIDENTIAL"}}]}}],
			"actions": [{"id": "close", "label": "Close", "style": "STYLE_DESTRUCTIVE"}],
			"refs": [{"kind": "KIND_LIST", "title": "Payments", "toolFqn": "cardfix.v1.list_cards"}],
			"catalogueDigest": "sha256:00"}`,
		want: `{"kind": "KIND_RECORD", "subjectId": "acc-1", "title": "Account", "state": "STATE_OPEN",
			"body": [{"facts": {"facts": [{"label": "Name", "value": "Ann", "field": "account.name"}]}}],
			"actions": [{"id": "close", "label": "Close", "style": "STYLE_DESTRUCTIVE"}],
			"disclosure": {"withheldFields": ["account.iban", "body[0].facts.facts[2]"]},
			"refs": [{"kind": "KIND_LIST", "title": "Payments", "toolFqn": "cardfix.v1.list_cards"}],
			"catalogueDigest": "sha256:00"}`,
		withheld: 2,
	},
	{
		rule: "a withheld choice is named by its path",
		tool: "get_card", clearance: confidential,
		in: `{"body": [{"text": {"text": "pay to"}}, {"input": {"id": "to", "label": "To", "choice": {"multi": true, "choices": [
			{"title": "A", "value": "a"}, {"title": "B", "value": "b", "access": {"clearance": "CLEARANCE_RESTRICTED"}}, {"title": "C", "value": "c"}]}}}]}`,
		want: `{"body": [{"text": {"text": "pay to"}}, {"input": {"id": "to", "label": "To", "choice": {"multi": true, "choices": [
			{"title": "A", "value": "a"}, {"title": "C", "value": "c"}]}}}],
			"disclosure": {"withheldFields": ["body[1].input.choice.choices[1]"]}}`,
		withheld: 1,
	},
	{
		rule: "a section all of whose labelled children were withheld goes whole, named after them",
		tool: "get_card", clearance: internal,
		in: `{"body": [{"text": {"text": "intro"}}, {"section": {"title": "S", "elements": [
			{"text": {"text": "plain"}},
			{"access": {"clearance": "CLEARANCE_CONFIDENTIAL"}, "text": {"text": "x"}},
			{"access": {"clearance": "CLEARANCE_CONFIDENTIAL", "compartments": ["pii"]}, "facts": {"facts": [{"label": "y"}]}}]}}]}`,
		want: `{"body": [{"text": {"text": "intro"}}],
			"disclosure": {"withheldFields": ["body[1].section.elements[1]", "body[1].section.elements[2]", "body[1]"]}}`,
		withheld: 3,
	},
	{
		rule: "a section keeping a labelled child stays",
		tool: "get_card", clearance: confidential,
		in: `{"body": [{"text": {"text": "intro"}}, {"section": {"title": "S", "elements": [
			{"text": {"text": "plain"}},
			{"access": {"clearance": "CLEARANCE_CONFIDENTIAL"}, "text": {"text": "x"}},
			{"access": {"clearance": "CLEARANCE_CONFIDENTIAL", "compartments": ["pii"]}, "facts": {"facts": [{"label": "y"}]}}]}}]}`,
		want: `{"body": [{"text": {"text": "intro"}}, {"section": {"title": "S", "elements": [
			{"text": {"text": "plain"}},
			{"access": {"clearance": "CLEARANCE_CONFIDENTIAL"}, "text": {"text": "x"}}]}}],
			"disclosure": {"withheldFields": ["body[1].section.elements[2]"]}}`,
		withheld: 1,
	},
	{
		rule: "a section with no labelled child stays, whatever was withheld below it",
		tool: "get_card", clearance: internal,
		in: `{"body": [{"section": {"title": "S", "elements": [{"facts": {"facts": [
			{"label": "a"}, {"label": "b", "access": {"clearance": "CLEARANCE_CONFIDENTIAL"}}]}}]}}]}`,
		want: `{"body": [{"section": {"title": "S", "elements": [{"facts": {"facts": [{"label": "a"}]}}]}}],
			"disclosure": {"withheldFields": ["body[0].section.elements[0].facts.facts[1]"]}}`,
		withheld: 1,
	},
	{
		rule: "a section gone whole is a withheld labelled child of the section holding it",
		tool: "get_card", clearance: confidential,
		in: `{"body": [{"section": {"title": "Outer", "elements": [
			{"access": {"clearance": "CLEARANCE_CONFIDENTIAL"}, "section": {"title": "Inner", "elements": [
				{"access": {"clearance": "CLEARANCE_RESTRICTED"}, "text": {"text": "r"}}]}}]}}]}`,
		want:     `{"disclosure": {"withheldFields": ["body[0].section.elements[0].section.elements[0]", "body[0].section.elements[0]", "body[0]"]}}`,
		withheld: 3,
	},
	{
		rule: "what the tool put in the disclosure is kept, and appended to",
		tool: "get_card", clearance: internal,
		in:       `{"body": [{"access": {"clearance": "CLEARANCE_CONFIDENTIAL"}, "text": {"text": "x"}}], "disclosure": {"withheldFields": ["ledger.iban"]}}`,
		want:     `{"disclosure": {"withheldFields": ["ledger.iban", "body[0]"]}}`,
		withheld: 1,
	},
	{
		rule: "a card the caller does not reach is dropped from its list",
		tool: "list_cards", clearance: internal,
		in: `{"items": [{"title": "A"}, {"title": "B", "access": {"clearance": "CLEARANCE_CONFIDENTIAL"}},
			{"title": "C", "body": [{"access": {"clearance": "CLEARANCE_CONFIDENTIAL"}, "text": {"text": "c"}}]},
			{"title": "D", "access": {"clearance": "CLEARANCE_RESTRICTED"}}]}`,
		want:     `{"items": [{"title": "A"}, {"title": "C", "disclosure": {"withheldFields": ["body[0]"]}}]}`,
		withheld: 3,
	},
	{
		rule: "a card the caller does not reach is cleared from its field",
		tool: "get_holder", clearance: confidential,
		in:       `{"card": {"title": "R", "access": {"clearance": "CLEARANCE_RESTRICTED"}}, "note": "n"}`,
		want:     `{"note": "n"}`,
		withheld: 1,
	},
	{
		rule: "a card the caller does not reach is removed from its map",
		tool: "map_cards", clearance: confidential,
		in: `{"byId": {"a": {"title": "A"}, "b": {"title": "B", "access": {"clearance": "CLEARANCE_RESTRICTED"}},
			"c": {"title": "C", "body": [{"access": {"clearance": "CLEARANCE_RESTRICTED"}, "text": {"text": "c"}}]}}}`,
		want:     `{"byId": {"a": {"title": "A"}, "c": {"title": "C", "disclosure": {"withheldFields": ["body[0]"]}}}}`,
		withheld: 2,
	},
	{
		rule: "a card below a compartmented list sits at the join of every rule above it",
		tool: "get_page", clearance: confidential,
		in:       `{"rows": [{"id": "1", "card": {"title": "A"}}, {"id": "2", "card": {"title": "B"}}], "note": "n"}`,
		want:     `{"rows": [{"id": "1"}, {"id": "2"}], "note": "n"}`,
		withheld: 2,
	},
	{
		rule: "a caller at the join of the rules above a card reaches it",
		tool: "get_page", clearance: confidential, holds: []string{"finance"},
		in:   `{"rows": [{"id": "1", "card": {"title": "A", "body": [{"access": {"clearance": "CLEARANCE_CONFIDENTIAL", "compartments": ["finance"]}, "text": {"text": "a"}}]}}]}`,
		want: `{"rows": [{"id": "1", "card": {"title": "A", "body": [{"access": {"clearance": "CLEARANCE_CONFIDENTIAL", "compartments": ["finance"]}, "text": {"text": "a"}}]}}]}`,
	},
	{
		rule: "a label below the join of the rules above its card is invalid",
		tool: "get_page", clearance: restricted, holds: []string{"finance", "pii"},
		in:      `{"rows": [{"id": "1", "card": {"title": "A"}}, {"id": "2", "card": {"body": [{"access": {"clearance": "CLEARANCE_RESTRICTED", "compartments": ["pii"]}, "text": {"text": "b"}}]}}]}`,
		invalid: "card at rows[1].card: body[0]: label CLEARANCE_RESTRICTED [pii] does not hold every compartment of the enclosing label",
	},
	{
		rule: "an answer that is a card whose own label the caller misses is not found",
		tool: "get_card", clearance: internal,
		in:       `{"title": "secret", "access": {"clearance": "CLEARANCE_CONFIDENTIAL"}}`,
		notFound: true,
	},
	{
		rule: "the whole card is checked before anything is removed: an invalid node after a withheld one still fails",
		tool: "get_card", clearance: internal,
		in: `{"body": [{"access": {"clearance": "CLEARANCE_CONFIDENTIAL"}, "text": {"text": "x"}},
			{"section": {"elements": [{"access": {"clearance": "CLEARANCE_PUBLIC"}, "text": {"text": "y"}}]}}]}`,
		invalid: "the answer's card: body[1].section.elements[0]: label CLEARANCE_PUBLIC is below the enclosing CLEARANCE_INTERNAL",
	},
	{
		rule: "the whole card is checked before anything is removed: an invalid node inside a withheld element still fails",
		tool: "get_card", clearance: internal,
		in:      `{"body": [{"access": {"clearance": "CLEARANCE_CONFIDENTIAL"}, "section": {"elements": [{"access": {"clearance": "CLEARANCE_INTERNAL"}, "text": {"text": "y"}}]}}]}`,
		invalid: "the answer's card: body[0].section.elements[0]: label CLEARANCE_INTERNAL is below the enclosing CLEARANCE_CONFIDENTIAL",
	},
	{
		rule: "every card is checked before any is removed: an invalid card after a dropped one still fails",
		tool: "list_cards", clearance: internal,
		in: `{"items": [{"title": "A", "access": {"clearance": "CLEARANCE_RESTRICTED"}},
			{"title": "B", "body": [{"access": {"clearance": "CLEARANCE_CONFIDENTIAL"}, "text": {"text": "b"}}]},
			{"title": "C", "body": [{"access": {"clearance": "CLEARANCE_UNSPECIFIED"}, "text": {"text": "c"}}]}]}`,
		invalid: "card at items[2]: body[0]: label has no clearance",
	},
	{
		rule: "an invalid card is invalid even for a caller who would not reach it",
		tool: "get_card", clearance: internal,
		in:      `{"access": {"clearance": "CLEARANCE_RESTRICTED"}, "body": [{"access": {"clearance": "CLEARANCE_INTERNAL"}, "text": {"text": "x"}}]}`,
		invalid: "the answer's card: body[0]: label CLEARANCE_INTERNAL is below the enclosing CLEARANCE_RESTRICTED",
	},
	{
		rule: "a label naming a compartment the catalogue does not declare is invalid",
		tool: "get_card", clearance: restricted, holds: []string{"finance", "pii"},
		in:      `{"body": [{"access": {"clearance": "CLEARANCE_CONFIDENTIAL", "compartments": ["pii", "payroll"]}, "text": {"text": "x"}}]}`,
		invalid: "the answer's card: body[0]: label names a compartment the catalogue does not declare",
	},
	{
		rule: "a label with CLEARANCE_UNSPECIFIED is invalid",
		tool: "get_card", clearance: restricted,
		in:      `{"body": [{"access": {"clearance": "CLEARANCE_UNSPECIFIED", "compartments": ["pii"]}, "text": {"text": "x"}}]}`,
		invalid: "the answer's card: body[0]: label has no clearance",
	},
	{
		rule: "an empty label is a label with no clearance, not an absent one",
		tool: "list_cards", clearance: restricted,
		in:      `{"items": [{"access": {}}]}`,
		invalid: "card at items[0]: access: label has no clearance",
	},
	{
		rule: "a label with a clearance garmd does not know is invalid",
		tool: "get_card", clearance: restricted,
		in:      `{"body": [{"access": {"clearance": 25}, "text": {"text": "x"}}]}`,
		invalid: "the answer's card: body[0]: label clearance 25 is not a clearance garmd knows",
	},
}

func TestProjectConformance(t *testing.T) {
	for _, tc := range conformance {
		t.Run(tc.rule, func(t *testing.T) {
			tl := tool(t, tc.tool)
			resp := answer(t, tl, tc.in)
			got, err := card.Project(tl, shapeOf(t, tc.clearance, tc.holds...), numbering(t), resp)
			switch {
			case tc.invalid != "":
				var f *deny.Failed
				if !errors.As(err, &f) || f.Code != deny.Internal || f.Kind != "card_invalid" || f.Detail != tc.invalid {
					t.Fatalf("Project = %v, %v; want card_invalid %q", got, err, tc.invalid)
				}
			case tc.notFound:
				var d *deny.Denied
				if !errors.As(err, &d) || d.Code != deny.NotFound {
					t.Fatalf("Project = %v, %v; want a NotFound denial", got, err)
				}
			default:
				if err != nil {
					t.Fatalf("Project: %v", err)
				}
				if got.Withheld != tc.withheld {
					t.Errorf("Withheld = %d, want %d", got.Withheld, tc.withheld)
				}
				assertAnswer(t, resp, tc.want)
				return
			}
			if got != (card.Result{}) {
				t.Errorf("a refusal counted %+v", got)
			}
			if !proto.Equal(resp, answer(t, tl, tc.in)) {
				t.Errorf("a refusal changed the answer")
			}
		})
	}
}
