// Package instance is chain steps 4 and 7 (design 7.4, 11; issue 31): which
// records a caller may act on and see, as the tool's contract declares them
// in ToolPolicy.instance, in CEL over the caller, the request and the
// answer.
//
// It owns the compilation of every rule of a catalogue generation at mount
// (Compile: against that generation's own descriptors and declared
// attributes, tools beside each other on every core, a rule that does not
// compile refusing the catalogue by tool and rule, in tool order; a program taken from the serving generation only when its
// descriptors are the very objects a reload reused and its expression and
// the declarations are equal; each rule text parsed once for every tool
// that has it, and no parse kept once the mount has compiled every rule),
// the principal's view (Rules.View, built once
// per verified token and cached beside it by authn), and the two checks:
//
//   - CheckRequest (step 4), after step 3 and before step 5: require rules
//     in declaration order; the first that is not exactly true refuses with
//     403 permission_denied naming the rule (deny.DenyRule). It runs before
//     any grant is verified or spent, so a refusal spends no grant and opens
//     no approval request, and no grant bypasses a rule.
//   - CheckAnswer (step 7), on the decoded answer before redaction: reveal
//     rules — one that does not hold answers as the tool's own not-found
//     (deny.Refuse("404")), byte for byte, since the decision read stored
//     data — then filters, in place, keeping rows in order, clearing the
//     declared fields (totals, page tokens) whenever one was removed.
//
// An audit-only rule is evaluated and recorded ("<phase>:<id>") and the call
// proceeds. What a call's rules decided is a Verdict for the ledger: rule
// ids, counts, and an error class from compile/instance's closed list —
// never a value and never CEL's text (docs/decisions/0095).
//
// The CEL environment, its cost bounds and the evaluation are
// protoc-gen-garm/compile/instance's, shared with the build so the two can
// never disagree about what a rule means. Deliberately not here: reading
// attributes from tokens (authn's), redaction (step 8), and the wire shape
// of refusals (deny's).
package instance
