// Package cli is the garm-catalogue command line: one function per command,
// flags parsed with the standard library, and three exit codes — 0 when the
// command did what was asked, 1 when it refused (a lint error, an unreadable
// artifact, a widening diff under --fail-on-widening, a failed upload), 2
// when it was asked wrongly (an unknown command or flag, a missing
// argument).
//
// Commands print results on stdout and everything else — warnings,
// diagnostics, refusals — on stderr, so a script can capture an artifact's
// digest or a diff without parsing around noise. The work itself lives in
// the sibling packages (build, artifact, inspect, diff, publish,
// signature); this package only wires arguments to them and words the
// outcome.
//
// An artifact's signatures are an envelope file beside it
// (signature.EnvelopeLocation): keygen and keys make the keys and the key
// set, build --sign-key and sign write the envelope (a second signer adds
// to the statement the first one wrote, never changes it), publish uploads
// it after the artifact (docs/decisions/0133), and inspect and diff show
// it. A private key file is created with mode 0600 and never overwritten.
package cli
