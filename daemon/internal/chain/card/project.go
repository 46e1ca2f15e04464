package card

import (
	"fmt"
	"slices"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/deny"
	"github.com/garm-dev/garm/daemon/internal/fieldpath"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Numbering turns a card label's compartment names into the generation's
// bits; ok is false when a name is not declared.
type Numbering func(names []string) (call.Compartments, bool)

// Result is what Project did to one answer, for the ledger.
type Result struct {
	// Withheld is the number of nodes withheld — elements, facts, choices,
	// sections gone whole and cards dropped from where they were held —
	// which the chain adds to redaction_count.
	Withheld uint32
}

// Project applies design 7.8 to resp, t's answer after the field plan has
// run, in place for a caller of shape: every card reachable in resp is
// checked whole, then every node shape does not reach is removed and named
// in its card's disclosure.
//
// An invalid card fails the call with deny.Fail(deny.Internal,
// "card_invalid", …); a response that is itself a card whose own label
// shape misses is deny.Deny(deny.NotFound, …). Any other error (a card
// vocabulary that has moved, an answer that is not t's) is garmd's own
// failure. Every refusal is decided before anything is removed, so after
// an error resp is as it came — and must not be sent.
func Project(t *call.Tool, shape call.Shape, number Numbering, resp protoreflect.Message) (Result, error) {
	switch {
	case t == nil:
		return Result{}, fmt.Errorf("card: no tool")
	case resp == nil || !resp.IsValid():
		return Result{}, fmt.Errorf("card: %s: no answer to project", t.FQN)
	case t.OutputPlan == nil:
		return Result{}, fmt.Errorf("card: %s has no output plan", t.FQN)
	case string(resp.Descriptor().FullName()) != t.OutputPlan.GetMessage():
		return Result{}, fmt.Errorf("card: %s answered %s, its plan is for %s", t.FQN, resp.Descriptor().FullName(), t.OutputPlan.GetMessage())
	}
	w := &walker{tool: t, shape: shape, number: number}
	md := resp.Descriptor()
	if md.FullName() == cardName {
		if err := w.found(resp, t.CardFloor, holder{}); err != nil {
			return Result{}, err
		}
	} else {
		if w.reach = t.CardHolders; w.reach == nil {
			w.reach = reaching(md)
		}
		if !w.reach[md.FullName()] {
			return Result{}, nil
		}
		if err := w.collect(resp, t.CardFloor); err != nil {
			return Result{}, err
		}
	}
	return w.project()
}

// walker is one call's projection: what it found on the way down, then
// what it removed.
type walker struct {
	tool   *call.Tool
	shape  call.Shape
	number Numbering
	reach  map[protoreflect.FullName]bool
	vocab  *vocabulary

	// numbers is the field-number path from resp to the field being
	// walked, matched against the output plan's rules; path is the same
	// with names and indexes, for error details and disclosures.
	numbers []int32
	path    []step

	sites    []site
	withheld uint32
	// disclosed collects the paths withheld from the card being projected.
	disclosed []string
	// names is readLabel's buffer.
	names []string
}

// site is a card found in resp, checked, with what is needed to remove it.
type site struct {
	card protoreflect.Message
	// label is the card's effective label: its own, or its floor.
	label call.Label
	holder
}

// holder is where a card sits, so that one the caller does not reach can
// be taken out: resp itself (parent nil), a singular field, an element of
// a list, or a map value.
type holder struct {
	parent protoreflect.Message
	field  protoreflect.FieldDescriptor
	list   *listDrops
	index  int
	mapKey protoreflect.MapKey
}

// listDrops gathers the elements to drop from one list of cards, so the
// list is compacted once, after every card in it was decided on, and the
// indexes the walk recorded stay valid until then.
type listDrops struct {
	list protoreflect.List
	drop []int
}

// collect walks m, held at floor, into every field whose type can hold a
// card, checking each card it finds. floor is the tool's card floor joined
// with the read labels of the output plan's rules on the way down.
func (w *walker) collect(m protoreflect.Message, floor call.Label) error {
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		child := fieldpath.Child(fd)
		if child == nil || !w.reach[child.FullName()] || !m.Has(fd) {
			continue
		}
		w.numbers = append(w.numbers, int32(fd.Number()))
		err := w.collectField(m, fd, child, w.ruleFloor(floor))
		w.numbers = w.numbers[:len(w.numbers)-1]
		if err != nil {
			return err
		}
	}
	return nil
}

func (w *walker) collectField(m protoreflect.Message, fd protoreflect.FieldDescriptor, child protoreflect.MessageDescriptor, floor call.Label) error {
	isCard := child.FullName() == cardName
	name := string(fd.Name())
	switch {
	case fd.IsList():
		list := m.Get(fd).List()
		var drops *listDrops
		if isCard {
			// Has held, so Mutable is this very list, writable for the
			// drops projection may make.
			drops = &listDrops{list: m.Mutable(fd).List()}
		}
		for j := range list.Len() {
			w.push(name, j)
			var err error
			if isCard {
				err = w.found(list.Get(j).Message(), floor, holder{parent: m, field: fd, list: drops, index: j})
			} else {
				err = w.collect(list.Get(j).Message(), floor)
			}
			w.pop()
			if err != nil {
				return err
			}
		}
		return nil
	case fd.IsMap():
		var err error
		w.push(name, anyKey)
		m.Get(fd).Map().Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
			if isCard {
				err = w.found(v.Message(), floor, holder{parent: m, field: fd, mapKey: k})
			} else {
				err = w.collect(v.Message(), floor)
			}
			return err == nil
		})
		w.pop()
		return err
	default:
		w.push(name, noIndex)
		defer w.pop()
		if isCard {
			return w.found(m.Get(fd).Message(), floor, holder{parent: m, field: fd})
		}
		return w.collect(m.Get(fd).Message(), floor)
	}
}

// ruleFloor is floor joined with the read label of every output-plan rule
// at exactly the current path: walking down one field at a time, the
// rules at every shorter prefix were joined on the way.
func (w *walker) ruleFloor(floor call.Label) call.Label {
	rules := w.tool.OutputPlan.GetRules()
	for i, rule := range rules {
		if slices.Equal(rule.GetNumbers(), w.numbers) {
			floor = floor.Tighter(call.Label{
				Clearance:    rule.GetRead(),
				Compartments: fieldpath.RuleCompartments(w.tool.OutputRuleCompartments, i, rule),
			})
		}
	}
	return floor
}

// found checks a card at floor, every node of it, and records it.
func (w *walker) found(card protoreflect.Message, floor call.Label, h holder) error {
	if w.vocab == nil || w.vocab.card != card.Descriptor() {
		v, err := resolveVocabulary(card.Descriptor())
		if err != nil {
			return fmt.Errorf("card: %s: the card vocabulary has moved: %w", w.tool.FQN, err)
		}
		w.vocab = v
	}
	at := len(w.path)
	label, err := w.checkCard(card, floor)
	if err != nil {
		// The detail names where the card is and, relative to the card,
		// the node: the same relative paths a disclosure uses.
		where, node := formatPath(w.path[:at]), formatPath(w.path[at:])
		w.path = w.path[:at]
		return invalid(where, node, err)
	}
	w.sites = append(w.sites, site{card: card, label: label, holder: h})
	return nil
}

// project removes, card by card, what the shape does not reach; every
// card has been checked by then.
func (w *walker) project() (Result, error) {
	var lists []*listDrops
	for _, s := range w.sites {
		if s.label.ReachedBy(w.shape) {
			w.projectCard(s.card, s.label)
			continue
		}
		w.withheld++
		switch {
		case s.parent == nil:
			return Result{}, deny.Deny(deny.NotFound, "the answer is a card whose label this caller does not reach")
		case s.list != nil:
			if len(s.list.drop) == 0 {
				lists = append(lists, s.list)
			}
			s.list.drop = append(s.list.drop, s.index)
		case s.field.IsMap():
			s.parent.Mutable(s.field).Map().Clear(s.mapKey)
		default:
			s.parent.Clear(s.field)
		}
	}
	for _, l := range lists {
		compact(l.list, func(i int) bool { return slices.Contains(l.drop, i) })
	}
	return Result{Withheld: w.withheld}, nil
}

// compact removes from list every element i for which drop(i), i being the
// element's index before any removal, keeping the order of the rest.
func compact(list protoreflect.List, drop func(i int) bool) {
	kept := 0
	for i := range list.Len() {
		if drop(i) {
			continue
		}
		if kept != i {
			list.Set(kept, list.Get(i))
		}
		kept++
	}
	list.Truncate(kept)
}

func invalid(where, node string, err error) error {
	at := "the answer's card"
	if where != "" {
		at = "card at " + where
	}
	return deny.Fail(deny.Internal, "card_invalid", fmt.Sprintf("%s: %s: %v", at, node, err))
}
