package card

import (
	"strings"

	"github.com/garm-dev/garm/daemon/internal/fieldpath"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Reaches reports whether md is a garm.card.v1.Card or holds one at any
// depth: through a message field, a list of messages or a map's message
// values, recursion included. Well-known types (google.protobuf.*) are
// values, not trees, and hold none. A tool whose output does not reach a
// card has nothing to project, so the chain may skip the step for it.
func Reaches(md protoreflect.MessageDescriptor) bool {
	if md == nil {
		return false
	}
	return reaching(md)[md.FullName()]
}

// Holders is the set of message types reachable from root that are or hold
// a card: what Project walks into. It is a function of the descriptor only,
// so the catalogue computes it once per tool (call.Tool.CardHolders).
func Holders(root protoreflect.MessageDescriptor) map[protoreflect.FullName]bool {
	return reaching(root)
}

// reaching is the set of message types reachable from root that are or
// hold a card. It walks the type graph once and then goes backwards from
// the cards, so a recursive type is decided right however the cycle is
// entered — a memo filled during a depth-first walk would record "no card"
// for a type whose only way to a card runs through a cycle still open.
func reaching(root protoreflect.MessageDescriptor) map[protoreflect.FullName]bool {
	holders := map[protoreflect.FullName][]protoreflect.FullName{}
	seen := map[protoreflect.FullName]bool{root.FullName(): true}
	var cards []protoreflect.FullName
	stack := []protoreflect.MessageDescriptor{root}
	for len(stack) > 0 {
		md := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if md.FullName() == cardName {
			// A card is a leaf of this walk: garmd projects the card
			// vocabulary, not cards inside cards.
			cards = append(cards, md.FullName())
			continue
		}
		if strings.HasPrefix(string(md.FullName()), "google.protobuf.") {
			continue
		}
		fields := md.Fields()
		for i := range fields.Len() {
			child := fieldpath.Child(fields.Get(i))
			if child == nil {
				continue
			}
			holders[child.FullName()] = append(holders[child.FullName()], md.FullName())
			if !seen[child.FullName()] {
				seen[child.FullName()] = true
				stack = append(stack, child)
			}
		}
	}
	out := make(map[protoreflect.FullName]bool, len(cards))
	for len(cards) > 0 {
		name := cards[len(cards)-1]
		cards = cards[:len(cards)-1]
		if out[name] {
			continue
		}
		out[name] = true
		cards = append(cards, holders[name]...)
	}
	return out
}
