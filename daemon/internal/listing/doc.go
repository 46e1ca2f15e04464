// Package listing answers ListTools (design 7.6): the tools a caller may see,
// each with the input schema that caller may fill in.
//
// It owns the request's one parameter (ParseRequest: the audience, strict,
// refusing anything it does not name), the answer's exact JSON shape, the
// audience rule (a tool declaring no audience is listed for agents only),
// and the per-caller input schema: a field the caller may not write is
// absent, a runner-sourced field is absent, and a message field denied
// takes its whole subtree with it (compile.AssembleSchema). Which tools a
// caller sees is not decided here: a row is listed only when
// visibility.Check — the same function chain step 2 calls — says Visible,
// so the listing can never show a tool the chain would answer 404 for, nor
// hide one it would serve. Each row also names the tool's instance rules
// (Rules) by id and description, sorted, so a caller knows the limits
// before it calls; never their expressions. A tool with limits lists those
// that apply to the caller (Limits: {id, description, window, limit}; one
// keyed on the agent only to a delegated caller). The body names the
// generation that answered: its catalogue_digest and, when garmd verified the
// catalogue's signatures (--catalogue-keys), its catalogue_version.
//
// Why: the listing is how an agent learns what it may do, so it must say
// exactly what the chain will accept, no more — a schema that named a field
// the caller may not write would invite a 403, and one that named a field
// it may not see would disclose it. Everything that does not depend on the
// caller (each row's head, the body's prefix) is computed once per
// generation; a schema is assembled once per generation, tool and caller
// shape (clearance and compartments: all a field's writability depends
// on) and then served from a bounded cache, so a warm listing is a walk over
// the tools and a copy of cached bytes.
//
// Deliberately not here: authentication, the ledger (a successful listing
// writes no row; the chain decides that), and output schemas — the listing
// describes what a caller may send, not what it will be shown.
package listing
