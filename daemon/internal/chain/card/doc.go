// Package card is the second half of chain step 8: card projection (design
// 7.8). After the field plan has run, Project finds every garm.card.v1.Card
// in the answer — the answer itself, or any singular field, list element or
// map value at any depth — checks each one whole against the labels that
// enclose it, then removes, per caller shape, every node the caller does
// not reach and names it in that card's disclosure.
//
// It owns:
//
//   - the card's floor: the tool's CardFloor (its gate joined with its
//     output's default read policy) joined with the read label of every
//     output-plan rule on the field-number path to the field holding the
//     card. A card that is the answer itself sits at CardFloor.
//   - validity: a node's own label (Card.access, Element.access,
//     Fact.access, Choice.access) must name a clearance garmd knows and only
//     compartments the catalogue declares, and must dominate the effective
//     label of what encloses it — a card its floor, an element its card or
//     section element, a fact or choice its element. An unlabelled node is
//     read at what encloses it, never at PUBLIC. Every card in the answer is
//     checked completely, withheld nodes included, before anything is
//     removed: an invalid card fails the call (500, error_kind
//     card_invalid) whoever asks, and the detail names the check and the
//     node's path, never a title, text, value or map key.
//   - projection: an element, fact or choice whose effective label the
//     caller's shape does not reach is removed with its subtree; its path
//     relative to the card (body[1].section.elements[0]) — or a fact's
//     field, when it has one — is appended after whatever the tool put in
//     disclosure.withheld_fields, indexes as the tool sent them. A section
//     element with labelled children, every one of which was withheld,
//     goes whole and is named after them. A card whose own label the
//     caller misses is dropped from its list, cleared from its field or
//     deleted from its map; a response that is such a card is 404
//     not_found. Each removal counts once in Result.Withheld.
//   - the vocabulary: garmd reads a card by full name and field number, so
//     CheckVocabulary verifies that a catalogue's garm.card.v1 still has
//     every field read or written at the number, kind, cardinality and type
//     design 3.4 gives it. The catalogue mount refuses a catalogue that fails
//     it; Project checks again and fails rather than misread.
//
// Why this way: a card is an answer whose policy varies per row, so the
// tool sends the whole card to every caller and garmd, not the tool,
// decides who sees what. Reading labels by number through protoreflect,
// never through generated Go types, reads exactly what the catalogue's
// descriptors say the tool sent. Checking before removing makes a card
// valid or invalid whole: a label looser than what encloses it is a bug in
// the tool, and it must fail for every caller, not only for the callers who
// happen to reach the node, or the bug would ship unnoticed. Failing
// closed throughout: an unlabelled node is never read below its encloser,
// a floor with no clearance is reached by nobody, and a rule whose
// compartments were not numbered is a floor nobody reaches.
//
// Deliberately not here: the field plan (chain/redact runs it first, and
// drops unknown fields; this package reads only known numbers anyway);
// deciding whether a tool can answer with a card at all, which Reaches
// answers and the chain may cache per tool; computing CardFloor, which the
// catalogue does once per generation; and anything a card holds that is not
// a labelled node — kind, title, actions, refs and the rest are the
// renderer's and are left as the tool sent them.
package card
