package card

import (
	"fmt"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// The full names garmd reads a card by (design 3.4). Only these names and the
// field numbers in vocabularyFields are contract; everything else in a card
// is the renderer's business.
const (
	cardName        protoreflect.FullName = "garm.card.v1.Card"
	elementName     protoreflect.FullName = "garm.card.v1.Element"
	sectionName     protoreflect.FullName = "garm.card.v1.Section"
	factSetName     protoreflect.FullName = "garm.card.v1.FactSet"
	factName        protoreflect.FullName = "garm.card.v1.Fact"
	inputName       protoreflect.FullName = "garm.card.v1.Input"
	choiceInputName protoreflect.FullName = "garm.card.v1.ChoiceInput"
	choiceName      protoreflect.FullName = "garm.card.v1.Choice"
	labelName       protoreflect.FullName = "garm.card.v1.Label"
	disclosureName  protoreflect.FullName = "garm.card.v1.Disclosure"
	clearanceName   protoreflect.FullName = "garm.tool.v1.Clearance"
)

// vocabulary is the fields of one catalogue's garm.card.v1 that projection
// reads and writes, resolved and checked once per call so the walk reads
// them by descriptor instead of looking numbers up at every node.
type vocabulary struct {
	card protoreflect.MessageDescriptor

	cardBody, cardDisclosure, cardAccess       protoreflect.FieldDescriptor
	elementFacts, elementInput, elementSection protoreflect.FieldDescriptor
	elementAccess                              protoreflect.FieldDescriptor
	sectionElements                            protoreflect.FieldDescriptor
	factSetFacts                               protoreflect.FieldDescriptor
	factField, factAccess                      protoreflect.FieldDescriptor
	inputChoice                                protoreflect.FieldDescriptor
	choiceInputChoices                         protoreflect.FieldDescriptor
	choiceAccess                               protoreflect.FieldDescriptor
	labelClearance, labelCompartments          protoreflect.FieldDescriptor
	disclosureWithheld                         protoreflect.FieldDescriptor
}

// expected is one field garmd reads: where it is, what it holds. The name
// is for messages (and for the paths projection writes into a disclosure):
// a field is found by its number, never by its name.
type expected struct {
	name   protoreflect.Name
	number protoreflect.FieldNumber
	list   bool
	kind   protoreflect.Kind
	// of is the full name of the message or enum the field holds.
	of protoreflect.FullName
}

// The vocabulary, field by field, as design 3.4 numbers it.
var (
	cardBody           = expected{"body", 5, true, protoreflect.MessageKind, elementName}
	cardDisclosure     = expected{"disclosure", 7, false, protoreflect.MessageKind, disclosureName}
	cardAccess         = expected{"access", 10, false, protoreflect.MessageKind, labelName}
	elementFacts       = expected{"facts", 2, false, protoreflect.MessageKind, factSetName}
	elementInput       = expected{"input", 4, false, protoreflect.MessageKind, inputName}
	elementSection     = expected{"section", 5, false, protoreflect.MessageKind, sectionName}
	elementAccess      = expected{"access", 10, false, protoreflect.MessageKind, labelName}
	sectionElements    = expected{"elements", 2, true, protoreflect.MessageKind, elementName}
	factSetFacts       = expected{"facts", 1, true, protoreflect.MessageKind, factName}
	factField          = expected{"field", 3, false, protoreflect.StringKind, ""}
	factAccess         = expected{"access", 4, false, protoreflect.MessageKind, labelName}
	inputChoice        = expected{"choice", 8, false, protoreflect.MessageKind, choiceInputName}
	choiceInputChoices = expected{"choices", 1, true, protoreflect.MessageKind, choiceName}
	choiceAccess       = expected{"access", 3, false, protoreflect.MessageKind, labelName}
	labelClearance     = expected{"clearance", 1, false, protoreflect.EnumKind, clearanceName}
	labelCompartments  = expected{"compartments", 2, true, protoreflect.StringKind, ""}
	disclosureWithheld = expected{"withheld_fields", 1, true, protoreflect.StringKind, ""}
)

// CheckVocabulary reports whether card — a catalogue's garm.card.v1.Card —
// still has every field garmd reads or writes when projecting (design 7.8) at
// the number, kind, cardinality and type garmd reads it as, down through
// the messages it holds. A catalogue whose card vocabulary has moved is
// refused at mount: read by number, a moved field would be misread, and a
// misread label is a disclosure.
func CheckVocabulary(card protoreflect.MessageDescriptor) error {
	_, err := resolveVocabulary(card)
	return err
}

// resolveVocabulary finds and checks every field of the vocabulary below
// card. Each message is taken from the field that holds it, and a message
// reached twice (Element from Card.body and Section.elements, Label from
// every access field) must be the same descriptor both times, so that no
// field resolved on one is ever used on a message of another.
func resolveVocabulary(card protoreflect.MessageDescriptor) (*vocabulary, error) {
	if card == nil {
		return nil, fmt.Errorf("no card message to check")
	}
	if card.FullName() != cardName {
		return nil, fmt.Errorf("%s is not %s", card.FullName(), cardName)
	}
	r := resolver{}
	v := &vocabulary{card: card}
	v.cardBody = r.field(card, cardBody)
	v.cardDisclosure = r.field(card, cardDisclosure)
	v.cardAccess = r.field(card, cardAccess)
	element := r.message(v.cardBody, nil)
	label := r.message(v.cardAccess, nil)

	v.elementFacts = r.field(element, elementFacts)
	v.elementInput = r.field(element, elementInput)
	v.elementSection = r.field(element, elementSection)
	v.elementAccess = r.field(element, elementAccess)
	r.message(v.elementAccess, label)

	v.sectionElements = r.field(r.message(v.elementSection, nil), sectionElements)
	r.message(v.sectionElements, element)

	v.factSetFacts = r.field(r.message(v.elementFacts, nil), factSetFacts)
	fact := r.message(v.factSetFacts, nil)
	v.factField = r.field(fact, factField)
	v.factAccess = r.field(fact, factAccess)
	r.message(v.factAccess, label)

	v.inputChoice = r.field(r.message(v.elementInput, nil), inputChoice)
	v.choiceInputChoices = r.field(r.message(v.inputChoice, nil), choiceInputChoices)
	v.choiceAccess = r.field(r.message(v.choiceInputChoices, nil), choiceAccess)
	r.message(v.choiceAccess, label)

	v.labelClearance = r.field(label, labelClearance)
	v.labelCompartments = r.field(label, labelCompartments)
	v.disclosureWithheld = r.field(r.message(v.cardDisclosure, nil), disclosureWithheld)
	if r.err != nil {
		return nil, r.err
	}
	return v, nil
}

// resolver keeps the first problem found, so resolveVocabulary reads as the
// list of fields it resolves; after a problem every call returns nil.
type resolver struct{ err error }

// field is want's field of md, or nil after recording why it is not there
// as garmd reads it.
func (r *resolver) field(md protoreflect.MessageDescriptor, want expected) protoreflect.FieldDescriptor {
	if r.err != nil || md == nil {
		return nil
	}
	fd := md.Fields().ByNumber(want.number)
	if fd == nil {
		r.err = fmt.Errorf("%s has no field %d; garmd reads %s", md.FullName(), want.number, describe(want))
		return nil
	}
	if fd.IsList() != want.list || fd.IsMap() || fd.Kind() != want.kind || heldName(fd) != want.of {
		r.err = fmt.Errorf("%s field %d is %s; garmd reads %s", md.FullName(), want.number, describeField(fd), describe(want))
		return nil
	}
	return fd
}

// message is the message fd holds. When same is given it must be that very
// descriptor.
func (r *resolver) message(fd protoreflect.FieldDescriptor, same protoreflect.MessageDescriptor) protoreflect.MessageDescriptor {
	if r.err != nil || fd == nil {
		return nil
	}
	md := fd.Message()
	if same != nil && md != same {
		r.err = fmt.Errorf("%s holds a %s other than the one the card's other fields hold", fd.FullName(), md.FullName())
		return nil
	}
	return md
}

// heldName is the full name of the message or enum fd holds, "" for a
// scalar.
func heldName(fd protoreflect.FieldDescriptor) protoreflect.FullName {
	switch {
	case fd.Message() != nil:
		return fd.Message().FullName()
	case fd.Enum() != nil:
		return fd.Enum().FullName()
	}
	return ""
}

func describe(want expected) string {
	what := want.kind.String()
	if want.of != "" {
		what = string(want.of)
	}
	if want.list {
		what = "repeated " + what
	}
	return fmt.Sprintf("%s %s = %d", what, want.name, want.number)
}

func describeField(fd protoreflect.FieldDescriptor) string {
	what := fd.Kind().String()
	if n := heldName(fd); n != "" {
		what = string(n)
	}
	switch {
	case fd.IsMap():
		what = "a map " + what
	case fd.IsList():
		what = "repeated " + what
	}
	return fmt.Sprintf("%s %s", what, fd.Name())
}
