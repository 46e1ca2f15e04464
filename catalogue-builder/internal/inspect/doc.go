// Package inspect owns the human and machine reading of one catalogue
// artifact, what `garm-catalogue inspect` prints (design 6): its digest, the
// annotation schema version, its size, its provenance, its signatures (the
// envelope beside it: catalogue name, version, signers, and whether they
// verify against a key set given), its taxonomy
// (compartments, tool sets and principal attributes), and per tool-bearing
// package its descriptor hash and, per tool, the policy that gates a call —
// FQN, route, verb, minimum clearance, compartments, tool sets, approval
// (with the grant's terms under GRANT), audit, and its instance rules with
// their expressions (the listing shows callers only ids and descriptions),
// and its effective limits, each with where it came from (the contract, or
// catalogue.yaml adding it or tightening the contract's).
//
// Describe turns an artifact into a View; WriteText and WriteJSON render the
// same View, so the two outputs never disagree. A View holds only what the
// artifact states: a value the author left unspecified is shown as
// UNSPECIFIED rather than as the default garmd would apply, because the
// difference is part of what an operator reviews.
//
// Enum values are spelled short in both outputs, without their type prefix
// (READ, CONFIDENTIAL, GRANT, AUDIT; see EnumName), and the diff package uses
// the same spelling, so a reader meets one vocabulary across the builder's
// commands. JSON keys are snake_case and sorted, lists are [] and never
// null, and nothing depends on map order, so the same artifact always prints
// the same bytes.
//
// What is deliberately not here: field policies (the plans are garmd's
// input, and the diff package compares them), descriptions and guidance
// (ListTools serves them), and any judgement of the policy — comparing two
// catalogues is the diff package's, and refusing a bad one was lint's,
// before the artifact existed.
package inspect
