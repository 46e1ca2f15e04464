// Package wire is the hop contract between garmd and tool services: how a
// tool's method maps to a NATS subject, its queue group and its micro service
// and endpoint names; the headers a call and its answer carry (the
// Garm-Invocation codec among them); the $SRV.INFO metadata keys; the refusal
// codes garmd passes through; the names of garm's streams, their subjects
// and its key-value bucket; and the material digest of an approval grant
// (design 7.9), which a client computes to ask a human for approval and garmd
// recomputes from the request it is sent. garmd and the tool runtime both derive these here,
// so the two sides cannot disagree.
//
// It holds names, pure functions and the invocation codec only; it opens no
// connection and depends on nothing but protobuf and garm's generated
// vocabulary, so garmd can import it without pulling in the tool runtime or a
// NATS client.
//
// The codec is strict because the invocation is the only thing a tool learns
// about a call besides the request: DecodeInvocation refuses anything garmd
// would not have produced (see its documentation), and EncodeInvocation
// refuses to produce what DecodeInvocation would refuse. Subject tokens built
// from what a caller asserts (a tenant, an app) go through Token, so nothing a
// caller sends can make a wildcard or an extra token.
package wire
