package card

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/garm-dev/garm/daemon/internal/call"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// step is one segment of a path: a field name, and the index of a list
// element (noIndex for a singular field, anyKey for a map value).
type step struct {
	name  string
	index int
}

const (
	noIndex = -1
	// anyKey stands for a map value. Its key is a value of the answer, and
	// a detail names places, never values.
	anyKey = -2
)

func (w *walker) push(name string, index int) { w.path = append(w.path, step{name, index}) }
func (w *walker) pop()                        { w.path = w.path[:len(w.path)-1] }

func (w *walker) pathString() string { return formatPath(w.path) }

// formatPath writes steps as "body[1].section.elements[0]", "by_id[*]".
func formatPath(steps []step) string {
	var b strings.Builder
	for i, s := range steps {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.name)
		switch s.index {
		case noIndex:
		case anyKey:
			b.WriteString("[*]")
		default:
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.index))
			b.WriteByte(']')
		}
	}
	return b.String()
}

// checkCard checks a card held at floor and every node in it, and returns
// its effective label. On an error w.path ends at the node that failed,
// for the caller to name.
func (w *walker) checkCard(card protoreflect.Message, floor call.Label) (call.Label, error) {
	v := w.vocab
	label, err := w.nodeLabel(card, v.cardAccess, floor, "floor")
	if err != nil {
		w.push(string(cardAccess.name), noIndex)
		return label, err
	}
	return label, w.checkElements(card.Get(v.cardBody).List(), string(cardBody.name), label)
}

// checkElements checks every element of list, enclosed at enclosing, and
// everything below each, withheld or not: a card is valid or invalid whole,
// whoever asks.
func (w *walker) checkElements(list protoreflect.List, name string, enclosing call.Label) error {
	v := w.vocab
	for i := range list.Len() {
		w.push(name, i)
		element := list.Get(i).Message()
		label, err := w.nodeLabel(element, v.elementAccess, enclosing, "enclosing")
		if err != nil {
			return err
		}
		switch {
		case element.Has(v.elementFacts):
			w.push(string(elementFacts.name), noIndex)
			if err := w.checkLeaves(element.Get(v.elementFacts).Message().Get(v.factSetFacts).List(), string(factSetFacts.name), v.factAccess, label); err != nil {
				return err
			}
			w.pop()
		case element.Has(v.elementInput):
			input := element.Get(v.elementInput).Message()
			if input.Has(v.inputChoice) {
				w.push(string(elementInput.name), noIndex)
				w.push(string(inputChoice.name), noIndex)
				if err := w.checkLeaves(input.Get(v.inputChoice).Message().Get(v.choiceInputChoices).List(), string(choiceInputChoices.name), v.choiceAccess, label); err != nil {
					return err
				}
				w.pop()
				w.pop()
			}
		case element.Has(v.elementSection):
			w.push(string(elementSection.name), noIndex)
			if err := w.checkElements(element.Get(v.elementSection).Message().Get(v.sectionElements).List(), string(sectionElements.name), label); err != nil {
				return err
			}
			w.pop()
		}
		w.pop()
	}
	return nil
}

// checkLeaves checks the labels of a list of facts or choices, each at
// access, enclosed at enclosing.
func (w *walker) checkLeaves(list protoreflect.List, name string, access protoreflect.FieldDescriptor, enclosing call.Label) error {
	for i := range list.Len() {
		w.push(name, i)
		if _, err := w.nodeLabel(list.Get(i).Message(), access, enclosing, "enclosing"); err != nil {
			return err
		}
		w.pop()
	}
	return nil
}

// nodeLabel is the effective label of node m: its own label at access when
// present, which must be well formed and dominate enclosing; else
// enclosing, since an unlabelled node is read at the floor of what holds
// it, never at PUBLIC. noun names enclosing in a problem.
func (w *walker) nodeLabel(m protoreflect.Message, access protoreflect.FieldDescriptor, enclosing call.Label, noun string) (call.Label, error) {
	if !m.Has(access) {
		return enclosing, nil
	}
	label, names, err := w.readLabel(m.Get(access).Message())
	if err != nil {
		return label, err
	}
	if label.Clearance < enclosing.Clearance {
		return label, fmt.Errorf("label %s is below the %s %s", label.Clearance, noun, enclosing.Clearance)
	}
	if !label.Dominates(enclosing) {
		return label, fmt.Errorf("label %s %v does not hold every compartment of the %s label", label.Clearance, names, noun)
	}
	return label, nil
}

var (
	errNoClearance = errors.New("label has no clearance")
	// errUndeclared does not name the compartment: an undeclared name is
	// whatever the tool wrote, and a detail quotes nothing the tool wrote.
	errUndeclared = errors.New("label names a compartment the catalogue does not declare")
)

// readLabel reads a Label message by number: a clearance garmd knows, and
// compartments the catalogue declares. The names are returned for a
// problem's detail (they are the catalogue's, not the card's) and are
// valid until the next label is read.
func (w *walker) readLabel(m protoreflect.Message) (call.Label, []string, error) {
	v := w.vocab
	n := m.Get(v.labelClearance).Enum()
	if n == 0 {
		return call.Label{}, nil, errNoClearance
	}
	if _, known := toolv1.Clearance_name[int32(n)]; !known {
		return call.Label{}, nil, fmt.Errorf("label clearance %d is not a clearance garmd knows", n)
	}
	label := call.Label{Clearance: toolv1.Clearance(n)}
	if !m.Has(v.labelCompartments) {
		return label, nil, nil
	}
	list := m.Get(v.labelCompartments).List()
	// One buffer serves every label of the call: Numbering reads names and
	// returns, and a problem's detail is formatted before the next label.
	w.names = w.names[:0]
	for i := range list.Len() {
		w.names = append(w.names, list.Get(i).String())
	}
	if w.number == nil {
		return label, nil, errUndeclared
	}
	set, ok := w.number(w.names)
	if !ok {
		return label, nil, errUndeclared
	}
	label.Compartments = set
	return label, w.names, nil
}
