package card

import (
	"github.com/garm-dev/garm/daemon/internal/call"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// effective is a checked node's effective label. checkCard has read every
// label, so reading one again fails only if the Numbering changed its mind;
// then the node is one nobody reaches.
func (w *walker) effective(m protoreflect.Message, access protoreflect.FieldDescriptor, enclosing call.Label) (label call.Label, labelled bool) {
	if !m.Has(access) {
		return enclosing, false
	}
	label, _, err := w.readLabel(m.Get(access).Message())
	if err != nil {
		return call.Label{}, true
	}
	return label, true
}

// projectCard removes from a card the caller reaches every node it does
// not, and names them after what the card's disclosure already holds.
func (w *walker) projectCard(card protoreflect.Message, label call.Label) {
	v := w.vocab
	if !card.Has(v.cardBody) {
		return
	}
	w.path, w.disclosed = w.path[:0], w.disclosed[:0]
	w.projectElements(card.Mutable(v.cardBody).List(), string(cardBody.name), label)
	if len(w.disclosed) == 0 {
		return
	}
	withheld := card.Mutable(v.cardDisclosure).Message().Mutable(v.disclosureWithheld).List()
	for _, p := range w.disclosed {
		withheld.Append(protoreflect.ValueOfString(p))
	}
}

// projectElements removes from list the elements the caller does not
// reach, and the sections that went whole, and projects the rest. It
// reports how many of list's elements were labelled and how many of those
// were withheld, for the section holding the list.
func (w *walker) projectElements(list protoreflect.List, name string, enclosing call.Label) (labelled, withheld int) {
	v := w.vocab
	var removed []bool
	for i := range list.Len() {
		w.push(name, i)
		element := list.Get(i).Message()
		label, own := w.effective(element, v.elementAccess, enclosing)
		gone := !label.ReachedBy(w.shape)
		if gone {
			w.withhold()
		} else {
			gone = w.projectInside(element, label)
		}
		if own {
			labelled++
			if gone {
				withheld++
			}
		}
		if gone {
			if removed == nil {
				removed = make([]bool, list.Len())
			}
			removed[i] = true
		}
		w.pop()
	}
	if removed != nil {
		compact(list, func(i int) bool { return removed[i] })
	}
	return labelled, withheld
}

// projectInside projects what a reached element holds, and reports
// whether the element is a section that must go whole: one with labelled
// children, every one of which was withheld.
func (w *walker) projectInside(element protoreflect.Message, label call.Label) (goesWhole bool) {
	v := w.vocab
	switch {
	case element.Has(v.elementFacts):
		facts := element.Mutable(v.elementFacts).Message()
		if facts.Has(v.factSetFacts) {
			w.push(string(elementFacts.name), noIndex)
			w.projectLeaves(facts.Mutable(v.factSetFacts).List(), string(factSetFacts.name), v.factAccess, v.factField, label)
			w.pop()
		}
	case element.Has(v.elementInput):
		input := element.Get(v.elementInput).Message()
		if !input.Has(v.inputChoice) {
			return false
		}
		choice := element.Mutable(v.elementInput).Message().Mutable(v.inputChoice).Message()
		if choice.Has(v.choiceInputChoices) {
			w.push(string(elementInput.name), noIndex)
			w.push(string(inputChoice.name), noIndex)
			w.projectLeaves(choice.Mutable(v.choiceInputChoices).List(), string(choiceInputChoices.name), v.choiceAccess, nil, label)
			w.pop()
			w.pop()
		}
	case element.Has(v.elementSection):
		section := element.Mutable(v.elementSection).Message()
		if !section.Has(v.sectionElements) {
			return false
		}
		w.push(string(elementSection.name), noIndex)
		labelled, withheld := w.projectElements(section.Mutable(v.sectionElements).List(), string(sectionElements.name), label)
		w.pop()
		if labelled > 0 && withheld == labelled {
			w.withhold()
			return true
		}
	}
	return false
}

// projectLeaves removes from a list of facts or choices those the caller
// does not reach. A fact is named by its field when it has one: the
// source path tells the reader what was held back.
func (w *walker) projectLeaves(list protoreflect.List, name string, access, field protoreflect.FieldDescriptor, enclosing call.Label) {
	var removed []bool
	for i := range list.Len() {
		leaf := list.Get(i).Message()
		if label, _ := w.effective(leaf, access, enclosing); label.ReachedBy(w.shape) {
			continue
		}
		if removed == nil {
			removed = make([]bool, list.Len())
		}
		removed[i] = true
		if field != nil && leaf.Get(field).String() != "" {
			w.withheld++
			w.disclosed = append(w.disclosed, leaf.Get(field).String())
			continue
		}
		w.push(name, i)
		w.withhold()
		w.pop()
	}
	if removed != nil {
		compact(list, func(i int) bool { return removed[i] })
	}
}

// withhold names the node at w.path in the card's disclosure and counts it.
func (w *walker) withhold() {
	w.withheld++
	w.disclosed = append(w.disclosed, w.pathString())
}
