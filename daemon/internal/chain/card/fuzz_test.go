package card_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/chain/card"
	"github.com/garm-dev/garm/daemon/internal/deny"
	cardv1 "github.com/garm-dev/garm/gen/garm/card/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// FuzzProject builds random cards from the bytes — random labels, well
// formed or not, and random nesting — and projects them, alone as
// get_card's answer or several as list_cards', for a random shape.
// Project must not panic; when it succeeds, no node left anywhere may
// carry an effective label the shape does not reach, and what it leaves
// must be what a plain reading of design 7.8 over the generated types
// leaves; when it refuses, that reading must refuse too.
func FuzzProject(f *testing.F) {
	f.Add([]byte{}, uint8(0))
	f.Add([]byte{3, 0, 4, 0, 2, 1, 4, 4, 3, 0, 3, 9, 4, 0, 0, 2}, uint8(1))
	f.Add([]byte{0, 0, 3, 3, 3, 3, 0, 3, 1, 3, 3, 2, 4, 3, 6, 1, 2, 3, 4, 3, 2, 1}, uint8(6))
	f.Add([]byte("\x03\x03\x00\x04\x03\x02\x03\x04\x00\x02\x03\x03\x01\x00\x04\x03\x02"), uint8(131))
	single, list := tool(f, "get_card"), tool(f, "list_cards")
	number := numbering(f)
	f.Fuzz(func(t *testing.T, data []byte, pick uint8) {
		g := &generator{data: data}
		shape := g.shape(t)
		o := oracle{shape: shape, number: number}
		if pick&1 == 0 {
			c := g.card(0)
			resp := dynamicOf(t, single.Output, mustMarshal(t, c))
			got, err := card.Project(single, shape, number, resp)
			want, wantErr := o.project(c, single.CardFloor)
			switch {
			case wantErr == "invalid":
				assertRefused(t, err, deny.Internal)
			case !want.kept:
				assertRefused(t, err, deny.NotFound)
			case err != nil:
				t.Fatalf("Project: %v", err)
			default:
				o.assertReached(t, resp, single.CardFloor)
				assertSame(t, resp, dynamicOf(t, single.Output, mustMarshal(t, want.card)), got.Withheld, want.withheld)
			}
			return
		}
		cards := make([]*cardv1.Card, 1+int(pick>>1)%3)
		var in []byte
		for i := range cards {
			cards[i] = g.card(0)
			in = protowire.AppendTag(in, 1, protowire.BytesType)
			in = protowire.AppendBytes(in, mustMarshal(t, cards[i]))
		}
		resp := dynamicOf(t, list.Output, in)
		got, err := card.Project(list, shape, number, resp)
		var out []byte
		var withheld uint32
		for _, c := range cards {
			want, wantErr := o.project(c, list.CardFloor)
			if wantErr != "" {
				assertRefused(t, err, deny.Internal)
				return
			}
			withheld += want.withheld
			if want.kept {
				out = protowire.AppendTag(out, 1, protowire.BytesType)
				out = protowire.AppendBytes(out, mustMarshal(t, want.card))
			}
		}
		if err != nil {
			t.Fatalf("Project: %v", err)
		}
		items := resp.Get(list.Output.Fields().ByNumber(1)).List()
		for i := range items.Len() {
			o.assertReached(t, items.Get(i).Message(), list.CardFloor)
		}
		assertSame(t, resp, dynamicOf(t, list.Output, out), got.Withheld, withheld)
	})
}

// generator reads a card out of fuzz bytes, zeros once they run out.
type generator struct {
	data []byte
	next int
}

func (g *generator) byte() byte {
	if g.next >= len(g.data) {
		return 0
	}
	g.next++
	return g.data[g.next-1]
}

var (
	clearances   = []toolv1.Clearance{unspecified, public, internal, confidential, restricted, 25}
	compartments = []string{"finance", "pii", "payroll"} // payroll is undeclared
)

func (g *generator) shape(tb testing.TB) call.Shape {
	b := g.byte()
	var names []string
	for i, name := range compartments[:2] {
		if b>>(2+i)&1 == 1 {
			names = append(names, name)
		}
	}
	return shapeOf(tb, clearances[1+int(b%4)], names...)
}

// label is absent two times in three; when present its clearance and
// compartments are anything, declared or not.
func (g *generator) label() *cardv1.Label {
	b := g.byte()
	if b%3 != 0 {
		return nil
	}
	l := &cardv1.Label{Clearance: clearances[int(b/3)%len(clearances)]}
	c := g.byte()
	for i, name := range compartments {
		// An undeclared name only when two bits agree, so most labels stay valid.
		if c>>i&1 == 1 && (i < 2 || c>>3&1 == 1) {
			l.Compartments = append(l.Compartments, name)
		}
	}
	return l
}

func (g *generator) card(depth int) *cardv1.Card {
	c := &cardv1.Card{Title: "t", SubjectId: fmt.Sprint(g.next), Access: g.label(), Body: g.elements(depth)}
	if g.byte()%4 == 0 {
		c.Disclosure = &cardv1.Disclosure{WithheldFields: []string{"from.the.tool"}}
	}
	return c
}

func (g *generator) elements(depth int) []*cardv1.Element {
	out := make([]*cardv1.Element, g.byte()%5)
	for i := range out {
		e := &cardv1.Element{Access: g.label()}
		switch k := g.byte() % 5; {
		case k == 0:
			e.Of = &cardv1.Element_Text{Text: &cardv1.Text{Text: "x"}}
		case k == 1:
			facts := &cardv1.FactSet{Facts: make([]*cardv1.Fact, g.byte()%4)}
			for j := range facts.Facts {
				facts.Facts[j] = &cardv1.Fact{Label: "l", Access: g.label()}
				if g.byte()%2 == 0 {
					facts.Facts[j].Field = fmt.Sprintf("f.%d", j)
				}
			}
			e.Of = &cardv1.Element_Facts{Facts: facts}
		case k == 2:
			e.Of = &cardv1.Element_Divider{Divider: &cardv1.Divider{}}
		case k == 3:
			choice := &cardv1.ChoiceInput{Choices: make([]*cardv1.Choice, g.byte()%4)}
			for j := range choice.Choices {
				choice.Choices[j] = &cardv1.Choice{Title: "c", Access: g.label()}
			}
			e.Of = &cardv1.Element_Input{Input: &cardv1.Input{Id: "i", Kind: &cardv1.Input_Choice{Choice: choice}}}
		case depth < 3:
			e.Of = &cardv1.Element_Section{Section: &cardv1.Section{Title: "s", Elements: g.elements(depth + 1)}}
		}
		out[i] = e
	}
	return out
}

// oracle is design 7.8 read plainly over the generated types, written apart
// from the package so the two can disagree.
type oracle struct {
	shape  call.Shape
	number card.Numbering
}

type projected struct {
	card     *cardv1.Card
	kept     bool
	withheld uint32
}

// own is l's label when l is well formed and dominates enclosing.
func (o oracle) own(l *cardv1.Label, enclosing call.Label) (call.Label, bool) {
	if l == nil {
		return enclosing, true
	}
	if _, known := toolv1.Clearance_name[int32(l.GetClearance())]; !known || l.GetClearance() == unspecified {
		return call.Label{}, false
	}
	bits, ok := call.Compartments(0), true
	if len(l.GetCompartments()) > 0 {
		bits, ok = o.number(l.GetCompartments())
	}
	label := call.Label{Clearance: l.GetClearance(), Compartments: bits}
	return label, ok && label.Clearance >= enclosing.Clearance && label.Compartments&enclosing.Compartments == enclosing.Compartments
}

func (o oracle) valid(els []*cardv1.Element, enclosing call.Label) bool {
	for _, e := range els {
		label, ok := o.own(e.GetAccess(), enclosing)
		if !ok {
			return false
		}
		for _, f := range e.GetFacts().GetFacts() {
			if _, ok := o.own(f.GetAccess(), label); !ok {
				return false
			}
		}
		for _, c := range e.GetInput().GetChoice().GetChoices() {
			if _, ok := o.own(c.GetAccess(), label); !ok {
				return false
			}
		}
		if !o.valid(e.GetSection().GetElements(), label) {
			return false
		}
	}
	return true
}

func (o oracle) project(c *cardv1.Card, floor call.Label) (projected, string) {
	label, ok := o.own(c.GetAccess(), floor)
	if !ok || !o.valid(c.GetBody(), label) {
		return projected{}, "invalid"
	}
	if !label.ReachedBy(o.shape) {
		return projected{withheld: 1}, ""
	}
	out := projected{card: proto.Clone(c).(*cardv1.Card), kept: true}
	var names []string
	out.card.Body, _, _ = o.elements(out.card.Body, "body", label, &names)
	if len(names) > 0 {
		if out.card.Disclosure == nil {
			out.card.Disclosure = &cardv1.Disclosure{}
		}
		out.card.Disclosure.WithheldFields = append(out.card.Disclosure.WithheldFields, names...)
	}
	out.withheld = uint32(len(names))
	return out, ""
}

func (o oracle) elements(els []*cardv1.Element, at string, enclosing call.Label, names *[]string) (kept []*cardv1.Element, labelled, withheld int) {
	for i, e := range els {
		path := fmt.Sprintf("%s[%d]", at, i)
		label, _ := o.own(e.GetAccess(), enclosing)
		gone := !label.ReachedBy(o.shape)
		switch {
		case gone:
			*names = append(*names, path)
		case e.GetFacts() != nil:
			var facts []*cardv1.Fact
			for j, f := range e.GetFacts().GetFacts() {
				if l, _ := o.own(f.GetAccess(), label); l.ReachedBy(o.shape) {
					facts = append(facts, f)
				} else if f.GetField() != "" {
					*names = append(*names, f.GetField())
				} else {
					*names = append(*names, fmt.Sprintf("%s.facts.facts[%d]", path, j))
				}
			}
			e.GetFacts().Facts = facts
		case e.GetInput().GetChoice() != nil:
			var choices []*cardv1.Choice
			for j, c := range e.GetInput().GetChoice().GetChoices() {
				if l, _ := o.own(c.GetAccess(), label); l.ReachedBy(o.shape) {
					choices = append(choices, c)
				} else {
					*names = append(*names, fmt.Sprintf("%s.input.choice.choices[%d]", path, j))
				}
			}
			e.GetInput().GetChoice().Choices = choices
		case e.GetSection() != nil:
			var l, w int
			e.GetSection().Elements, l, w = o.elements(e.GetSection().GetElements(), path+".section.elements", label, names)
			if l > 0 && l == w {
				*names = append(*names, path)
				gone = true
			}
		}
		if e.GetAccess() != nil {
			labelled++
			if gone {
				withheld++
			}
		}
		if !gone {
			kept = append(kept, e)
		}
	}
	return kept, labelled, withheld
}

// assertReached checks, on the projected message read back through the
// generated types, that the card and every node left in it is reached.
func (o oracle) assertReached(tb testing.TB, m protoreflect.Message, floor call.Label) {
	tb.Helper()
	c := &cardv1.Card{}
	if err := proto.Unmarshal(mustMarshal(tb, m.Interface()), c); err != nil {
		tb.Fatal(err)
	}
	label, _ := o.own(c.GetAccess(), floor)
	if !label.ReachedBy(o.shape) {
		tb.Fatalf("a card the shape does not reach was left: %v", c)
	}
	var walk func(els []*cardv1.Element, enclosing call.Label)
	walk = func(els []*cardv1.Element, enclosing call.Label) {
		for _, e := range els {
			label, _ := o.own(e.GetAccess(), enclosing)
			if !label.ReachedBy(o.shape) {
				tb.Fatalf("an element the shape does not reach was left: %v", e)
			}
			for _, f := range e.GetFacts().GetFacts() {
				if l, _ := o.own(f.GetAccess(), label); !l.ReachedBy(o.shape) {
					tb.Fatalf("a fact the shape does not reach was left: %v", f)
				}
			}
			for _, ch := range e.GetInput().GetChoice().GetChoices() {
				if l, _ := o.own(ch.GetAccess(), label); !l.ReachedBy(o.shape) {
					tb.Fatalf("a choice the shape does not reach was left: %v", ch)
				}
			}
			walk(e.GetSection().GetElements(), label)
		}
	}
	walk(c.GetBody(), label)
}

func assertRefused(tb testing.TB, err error, code deny.Code) {
	tb.Helper()
	var d *deny.Denied
	var f *deny.Failed
	switch {
	case code == deny.NotFound && errors.As(err, &d) && d.Code == code:
	case code == deny.Internal && errors.As(err, &f) && f.Kind == "card_invalid":
	default:
		tb.Fatalf("Project = %v, want a %v refusal", err, code)
	}
}

func assertSame(tb testing.TB, got, want protoreflect.Message, gotCount, wantCount uint32) {
	tb.Helper()
	if !proto.Equal(got.Interface(), want.Interface()) {
		tb.Fatalf("projected\n got %v\nwant %v", got, want)
	}
	if gotCount != wantCount {
		tb.Fatalf("Withheld = %d, want %d", gotCount, wantCount)
	}
}

func dynamicOf(tb testing.TB, md protoreflect.MessageDescriptor, b []byte) *dynamicpb.Message {
	tb.Helper()
	m := dynamicpb.NewMessage(md)
	if err := proto.Unmarshal(b, m); err != nil {
		tb.Fatal(err)
	}
	return m
}

func mustMarshal(tb testing.TB, m proto.Message) []byte {
	tb.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
