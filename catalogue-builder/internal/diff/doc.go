// Package diff owns the policy difference between two catalogues, what
// `garm-catalogue diff` prints (design 6): one sentence per change, each
// marked widening, narrowing or unclear, so a reviewer sees what a new
// catalogue lets callers reach before it is mounted, and a pipeline can
// refuse one that widens anything (HasWidening).
//
// Compare matches tools by FQN and compares what gates a call: the tool's
// verb, minimum clearance, compartments and tool sets, its approval and
// audit, and, field by field, the plans of its input and output. A new
// tool, a lowered clearance, a removed compartment, a weaker approval mode
// or audit level and a field made more readable widen; the reverse of each
// narrows; a verb change and a changed redaction are unclear. The full
// table, and the decisions made where the spec is silent, are in
// docs/decisions/0017-catalogue-diff.md. Instance rules (issue 31) are
// matched by phase and id: an enforced rule added, or an audit-only one
// enforced, narrows; the reverse widens; an audit-only rule added or removed
// decides nothing and is unclear, as is a changed expression or filtered
// field. Declared principal attributes added, removed or changed are
// unclear: a rule reading one is checked against the new declarations at
// build. Effective limits (the catalogue's limits, whether the
// contract or catalogue.yaml set them) are matched by id: a limit added or
// tightened narrows; one removed or loosened — a higher count or in_flight,
// a lower cost, soft where it was hard — widens; a change of kind, key or
// window, or one both tighter and looser, is unclear.
//
// It refuses to guess. A change widens when it lets some caller reach,
// read or write more, or weakens a safeguard on what callers already can
// do (approval, audit); it narrows in the reverse case; a change that
// moves callers both ways, or whose effect depends on the data, is unclear
// and left to a person. Values the author left
// UNSPECIFIED are read as the spec reads them (an unspecified clearance is
// met by no one, an unspecified approval is as weak as NONE, an
// unspecified audit level is LEDGER), never as a guess.
//
// What is deliberately not here: wire-shape changes (the descriptor hash
// and field numbers say whether old callers still fit; that is a
// compatibility question, not a policy one), prose (titles, descriptions,
// guidance, the reason of a redaction), declared effects (they describe
// consequences; what gates them — verb, approval, audit — is compared),
// and validation rules. Enum values are spelled as inspect spells them.
package diff
