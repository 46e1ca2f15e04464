// Package instance is the one definition of what an instance rule means
// (docs/design.md, instance authorization; design 7.4 steps 4 and 7): the CEL
// environment rules are checked in, the static bound on what one evaluation
// may cost, the principal's view, and the evaluation that turns a rule into a
// verdict. protoc-gen-garm and garm-catalogue compile every rule with it at
// build time; garmd compiles the same rules with it at mount and evaluates
// them on every call, so the build and the daemon cannot disagree about what
// a rule says.
//
// An Env holds the catalogue's declarations (its principal attributes and
// how many compartments it declares). Env.Compile parses and type-checks one
// rule against a Target — the phase and the tool's own request and answer
// messages — requires a bool result, refuses has() over principal, bounds the
// worst-case cost from declared sizes (protovalidate max_len, max_items and
// max_pairs on message fields, max_len and max_items on attributes, the
// compartment count) and refuses a rule whose bound is unknown or above
// MaxCost (a *CostError naming what to bound). The Program it returns reports
// what it reads, its bound, the compartments it tests membership of, the
// lists it quantifies with all() and the paths it tests with has(), for the
// plan and for lint; HoldsForEveryCaller finds a rule that restricts no one
// who can see the tool. An Env registers each file's messages with CEL once,
// however many tools' rules read them, so compiling the rules of a large
// catalogue grows with its rules, not with its rules times its files' sizes
// (docs/decisions/0138). It parses each rule text once, too, however many
// targets' rules have it, and checks a deep copy of that parse for each
// target; the macro-call records are read for all() and dropped at the
// parse, so a rule's program is the same whether its text was parsed before
// or not (docs/decisions/0141). ForgetParses drops the parses once every
// rule is compiled.
//
// The principal is a set of qualified CEL variables (principal.subject,
// principal.attrs.<name>, ...), never raw claims. Absent is not empty: a
// View binds a variable only when it has a value, and a rule that reads an
// unbound variable fails, and a failing rule does not hold. List values are
// held as sets so membership is a binary search over the sorted members,
// with nothing built per member. The call's messages reach CEL unboxed (its
// field qualifiers read a proto.Message directly), so a rule costs only the
// fields it reads (docs/decisions/0097). Program.Eval reports anything
// but exactly true as false, with an ErrorClass from a closed list when the
// evaluation failed; CEL's error text never leaves this package, because it
// can quote request values. Evaluation is not metered at run time: the
// static bound is the guard (docs/decisions/0091-instance-rules-cost-is-bounded-at-build-not-metered-per-call.md).
//
// Only CEL's standard library is declared: no extension functions, so a rule
// means the same in every build. What is deliberately not here: which tools
// carry which rules and what a refusal looks like on the wire (garmd's chain),
// and lint judgements about fields and clearances (package compile).
//
// A Program belongs to the descriptors it was compiled against: the request
// and answer given to Eval must be messages of those very descriptors (for
// dynamicpb, built from the same protoreflect.MessageDescriptor), never of
// another generation's.
package instance
