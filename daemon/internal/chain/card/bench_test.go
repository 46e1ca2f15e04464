package card_test

import (
	"fmt"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/chain/card"
	cardv1 "github.com/garm-dev/garm/gen/garm/card/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"google.golang.org/protobuf/proto"
)

// benchCard is a card of 31 elements — texts, dividers, fact sets, a choice
// and sections — a third of its nodes labelled, at every clearance, some
// with compartments.
func benchCard() *cardv1.Card {
	labels := []*cardv1.Label{
		nil,
		{Clearance: toolv1.Clearance_CLEARANCE_CONFIDENTIAL},
		nil,
		{Clearance: toolv1.Clearance_CLEARANCE_CONFIDENTIAL, Compartments: []string{"finance"}},
		nil,
		{Clearance: toolv1.Clearance_CLEARANCE_RESTRICTED, Compartments: []string{"pii"}},
	}
	text := func(i int) *cardv1.Element {
		return &cardv1.Element{Access: labels[i%len(labels)], Of: &cardv1.Element_Text{Text: &cardv1.Text{Text: fmt.Sprint("line ", i)}}}
	}
	facts := func(i int) *cardv1.Element {
		set := &cardv1.FactSet{}
		for j := range 5 {
			set.Facts = append(set.Facts, &cardv1.Fact{Label: "l", Value: "v", Field: fmt.Sprintf("f%d.%d", i, j), Access: labels[(i+j)%len(labels)]})
		}
		return &cardv1.Element{Of: &cardv1.Element_Facts{Facts: set}}
	}
	c := &cardv1.Card{Kind: cardv1.Kind_KIND_RECORD, Title: "Account", Access: &cardv1.Label{Clearance: toolv1.Clearance_CLEARANCE_INTERNAL}}
	for i := range 8 {
		c.Body = append(c.Body, text(i))
	}
	c.Body = append(c.Body, facts(0), facts(1), &cardv1.Element{Of: &cardv1.Element_Divider{Divider: &cardv1.Divider{}}})
	choice := &cardv1.ChoiceInput{}
	for j := range 5 {
		choice.Choices = append(choice.Choices, &cardv1.Choice{Title: "c", Value: fmt.Sprint(j), Access: labels[j%len(labels)]})
	}
	c.Body = append(c.Body, &cardv1.Element{Of: &cardv1.Element_Input{Input: &cardv1.Input{Id: "to", Kind: &cardv1.Input_Choice{Choice: choice}}}})
	for s := range 3 {
		section := &cardv1.Section{Title: "s"}
		for i := range 5 {
			section.Elements = append(section.Elements, text(s+i))
		}
		c.Body = append(c.Body, &cardv1.Element{Access: labels[s*2%len(labels)], Of: &cardv1.Element_Section{Section: section}})
	}
	c.Body = append(c.Body, &cardv1.Element{Of: &cardv1.Element_Divider{Divider: &cardv1.Divider{}}})
	return c
}

func BenchmarkProject(b *testing.B) {
	cards := tool(b, "get_card")
	// The chain numbers by a lookup that allocates nothing; so does this.
	bits := map[string]call.Compartments{"finance": fixture.Compartments(b, "finance"), "pii": fixture.Compartments(b, "pii")}
	number := func(names []string) (call.Compartments, bool) {
		var set call.Compartments
		for _, n := range names {
			bit, ok := bits[n]
			if !ok {
				return 0, false
			}
			set |= bit
		}
		return set, true
	}
	resp := dynamicOf(b, cards.Output, mustMarshal(b, benchCard()))
	// A caller who reaches everything changes nothing, so one answer
	// serves every iteration: this is the check and the walk alone.
	b.Run("reaches everything", func(b *testing.B) {
		shape := shapeOf(b, restricted, "finance", "pii")
		b.ReportAllocs()
		for b.Loop() {
			if _, err := card.Project(cards, shape, number, resp); err != nil {
				b.Fatal(err)
			}
		}
	})
	// Withholding changes the answer, so each iteration projects a clone;
	// subtract "clone only".
	b.Run("withholds a third", func(b *testing.B) {
		shape := shapeOf(b, confidential)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := card.Project(cards, shape, number, proto.Clone(resp).ProtoReflect()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("clone only", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = proto.Clone(resp)
		}
	})
}
