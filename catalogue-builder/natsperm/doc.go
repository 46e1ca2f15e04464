// Package natsperm derives, from a catalogue, the least-privilege NATS
// permissions of everyone on garm's bus: garmd, each tool package's
// service, the approvals service, and everyone else (design 5.2 subjects; decision 0040).
//
// It owns the list of subjects each identity needs and the two forms it is
// written in: a nats-server configuration `authorization` block and a JSON
// document in the shape of a NATS user JWT's permissions, for nsc or an
// auth callout. Both are deterministic: the same catalogue gives the same
// bytes, and a new tool in the catalogue is a new line.
//
// It enforces nothing. The NATS server does: garm writes no authorization
// layer of its own, so these rules are only as good as the server they are
// given to. What is deliberately not here: credentials (passwords, nkeys,
// JWTs are the operator's, referred to by variable), and any right for an
// identity the catalogue does not imply — an agent, a dashboard or an
// operator's tooling gets nothing from this package and must be granted
// by hand, knowingly.
package natsperm
