package card_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/chain/card"
	"github.com/garm-dev/garm/daemon/internal/deny"
	"google.golang.org/protobuf/proto"
)

// sentinel is written into every value a tool can put in a card; no
// refusal's detail may carry it.
const sentinel = "SENTINEL-7f3a"

func TestAnInvalidCardsDetailNeverQuotesTheCard(t *testing.T) {
	invalidNodes := []string{
		`{"access": {"clearance": "CLEARANCE_PUBLIC"}, "text": {"text": "SENTINEL-7f3a"}}`,
		`{"access": {"clearance": "CLEARANCE_CONFIDENTIAL", "compartments": ["SENTINEL-7f3a"]}, "text": {"text": "SENTINEL-7f3a"}}`,
		`{"access": {"clearance": 33}, "text": {"text": "SENTINEL-7f3a"}}`,
		`{"facts": {"facts": [{"label": "SENTINEL-7f3a", "value": "SENTINEL-7f3a", "field": "SENTINEL-7f3a", "access": {"clearance": "CLEARANCE_UNSPECIFIED"}}]}}`,
		`{"input": {"id": "SENTINEL-7f3a", "label": "SENTINEL-7f3a", "choice": {"choices": [{"title": "SENTINEL-7f3a", "value": "SENTINEL-7f3a", "access": {"clearance": "CLEARANCE_PUBLIC"}}]}}}`,
		`{"section": {"title": "SENTINEL-7f3a", "elements": [{"access": {"clearance": "CLEARANCE_PUBLIC"}, "text": {"text": "SENTINEL-7f3a"}}]}}`,
	}
	maps := tool(t, "map_cards")
	for _, node := range invalidNodes {
		in := `{"byId": {"SENTINEL-7f3a": {"title": "SENTINEL-7f3a", "subjectId": "SENTINEL-7f3a",
			"actions": [{"id": "SENTINEL-7f3a", "label": "SENTINEL-7f3a"}],
			"disclosure": {"withheldFields": ["SENTINEL-7f3a"]},
			"body": [{"text": {"text": "SENTINEL-7f3a"}}, ` + node + `]}}}`
		_, err := card.Project(maps, shapeOf(t, restricted, "finance", "pii"), numbering(t), answer(t, maps, in))
		var f *deny.Failed
		if !errors.As(err, &f) || f.Kind != "card_invalid" {
			t.Fatalf("%s: Project = %v, want card_invalid", node, err)
		}
		if strings.Contains(f.Detail, sentinel) || strings.Contains(err.Error(), sentinel) {
			t.Errorf("the detail quotes the card: %s", f.Detail)
		}
		if !strings.HasPrefix(f.Detail, "card at by_id[*]: body[1]") {
			t.Errorf("the detail does not name the node: %s", f.Detail)
		}
	}
}

func TestAnAnswerWithoutACardIsLeftAlone(t *testing.T) {
	plain := tool(t, "get_plain")
	in := `{"name": "n", "inner": {"value": "v"}, "extra": {"k": {"list": [{"access": "x"}]}}}`
	resp := answer(t, plain, in)
	got, err := card.Project(plain, shapeOf(t, internal), numbering(t), resp)
	if err != nil || got != (card.Result{}) {
		t.Fatalf("Project = %+v, %v", got, err)
	}
	if !proto.Equal(resp, answer(t, plain, in)) {
		t.Errorf("Project changed an answer with no card")
	}
}

func TestANodeEveryoneReachesCostsNothing(t *testing.T) {
	cards := tool(t, "get_card")
	in := `{"title": "T", "body": [{"text": {"text": "a"}}, {"access": {"clearance": "CLEARANCE_INTERNAL"}, "facts": {"facts": [{"label": "x"}]}}]}`
	resp := answer(t, cards, in)
	got, err := card.Project(cards, shapeOf(t, restricted), numbering(t), resp)
	if err != nil || got.Withheld != 0 {
		t.Fatalf("Project = %+v, %v", got, err)
	}
	// No removal, so no disclosure is added: an empty one would tell a
	// renderer something was withheld.
	assertAnswer(t, resp, in)
}

func TestAFloorWithNoClearanceIsReachedByNobody(t *testing.T) {
	bare := *tool(t, "get_card")
	bare.CardFloor = call.Label{}
	in := `{"title": "T", "body": [{"text": {"text": "a"}}]}`
	_, err := card.Project(&bare, shapeOf(t, restricted, "finance", "pii"), numbering(t), answer(t, &bare, in))
	if d := (*deny.Denied)(nil); !errors.As(err, &d) || d.Code != deny.NotFound {
		t.Fatalf("Project = %v, want NotFound: an unlabelled card under an unset floor is nobody's", err)
	}
}

func TestARuleWhoseCompartmentsWereNotNumberedIsAFloorNobodyReaches(t *testing.T) {
	page := *tool(t, "get_page")
	page.OutputRuleCompartments = nil
	resp := answer(t, &page, `{"rows": [{"id": "1", "card": {"title": "A"}}]}`)
	got, err := card.Project(&page, shapeOf(t, restricted, "finance", "pii"), numbering(t), resp)
	if err != nil || got.Withheld != 1 {
		t.Fatalf("Project = %+v, %v; want the card withheld", got, err)
	}
	assertAnswer(t, resp, `{"rows": [{"id": "1"}]}`)
}

func TestWithoutANumberingEveryCompartmentIsUndeclared(t *testing.T) {
	cards := tool(t, "get_card")
	shape := shapeOf(t, restricted, "finance", "pii")
	plain := answer(t, cards, `{"body": [{"access": {"clearance": "CLEARANCE_CONFIDENTIAL"}, "text": {"text": "a"}}]}`)
	if _, err := card.Project(cards, shape, nil, plain); err != nil {
		t.Fatalf("a label with no compartments needs no numbering: %v", err)
	}
	named := answer(t, cards, `{"body": [{"access": {"clearance": "CLEARANCE_CONFIDENTIAL", "compartments": ["pii"]}, "text": {"text": "a"}}]}`)
	var f *deny.Failed
	if _, err := card.Project(cards, shape, nil, named); !errors.As(err, &f) || f.Kind != "card_invalid" {
		t.Fatalf("Project = %v, want card_invalid", err)
	}
}

func TestProjectRefusesAnAnswerThatIsNotTheTools(t *testing.T) {
	cards, holder := tool(t, "get_card"), tool(t, "get_holder")
	for name, run := range map[string]func() error{
		"another tool's answer": func() error {
			_, err := card.Project(cards, shapeOf(t, internal), numbering(t), answer(t, holder, `{}`))
			return err
		},
		"no answer": func() error {
			_, err := card.Project(cards, shapeOf(t, internal), numbering(t), nil)
			return err
		},
		"no tool": func() error {
			_, err := card.Project(nil, shapeOf(t, internal), numbering(t), answer(t, cards, `{}`))
			return err
		},
	} {
		err := run()
		if err == nil {
			t.Errorf("%s: Project succeeded", name)
			continue
		}
		if kind, _ := deny.Detail(err); kind != "internal" {
			t.Errorf("%s: %v is not garmd's own failure", name, err)
		}
	}
}

func TestReachesFindsCardsAtAnyDepth(t *testing.T) {
	for name, want := range map[string]bool{
		"get_card":    true,
		"get_holder":  true,
		"list_cards":  true,
		"map_cards":   true,
		"get_page":    true,
		"get_dossier": true,
		"get_plain":   false,
	} {
		if got := card.Reaches(tool(t, name).Output); got != want {
			t.Errorf("Reaches(%s) = %v, want %v", tool(t, name).Output.FullName(), got, want)
		}
	}
	if card.Reaches(nil) {
		t.Error("Reaches(nil) = true")
	}
}
