// Package mcp is garmd's Model Context Protocol endpoint: POST /mcp on the
// tool plane (Streamable HTTP, stateless, JSON answers) and the protected
// resource metadata that points an MCP client at its authorization servers
// (RFC 9728).
//
// It owns the wire of MCP and nothing of policy: it translates each
// JSON-RPC request into one chain.Request, runs chain.Run in process, and
// dresses the chain.Response as JSON-RPC (docs/decisions/0079). tools/call
// names its tool by FQN and carries its arguments as the body: the same
// ten steps, the same ledger row and event id as the HTTP route, its
// answer mapped by code by callError (mapping.go). tools/list asks the
// chain for a page of the caller's own listing (the lister's, the same
// projected input schemas as ListTools), with a cursor bound to the
// generation and to the last tool shown; each tool's description ends with
// its instance rules' descriptions and its _meta lists them as {id,
// description} (listing.Rules), never their expressions, so a model knows
// the limits before it calls; _meta's dev.garm/limits lists the tool's
// limits that apply to the caller (listing.Limits), and the result's _meta
// names the generation that listed them (its digest, and its signed version
// with --catalogue-keys), read off the generation the chain's page carries.
// The lifecycle methods (initialize, ping, server/discover) ask the chain to admit the caller,
// then are the official Go SDK's, behind a gate that answers everything
// the SDK would answer with words of the request, and with the request's
// own id bytes.
//
// It refuses, with a static JSON-RPC error and before the chain: a method
// other than POST (405), a foreign Origin or a Host a loopback listener
// does not serve (403), a media type other than JSON, a body over the
// limit, a protocol version it does not serve, and a body that is not one
// JSON-RPC request (batches, malformed JSON, duplicated members, an id that
// is not a string or an int64, a header and _meta that disagree on the
// revision). A security-relevant header sent twice is the chain's to
// refuse, with a row, as on the HTTP route. params and its _meta are read
// once, by exact member names, and that one reading feeds the revision,
// the trace context and the call. Every answer is Cache-Control: private,
// no-store.
//
// A call waiting for a human's approval (approval.go) is answered in the
// shape its revision has for it: input_required with a URL elicitation of
// the request's page and an HMAC-sealed requestState on 2026-07-28, the
// -32042 URL elicitation error on 2025-11-25 for a call declaring the
// capability, the isError result otherwise. The retry's state is verified
// here; whose it is, and the grant it leads to, are checked by the chain
// (docs/decisions/0052).
//
// Why a gate in front of the SDK rather than the SDK alone: the SDK's
// transport answers some malformed requests with the request's own words,
// accepts a foreign Origin, re-encodes ids, and marks list results publicly
// cacheable by default; garm's answers are per caller and static. Why
// tools/list and tools/call are answered here rather than as SDK tool
// handlers: the SDK keeps one global tool registry, and garm has no global
// list — each caller has its own, decided per request (docs/decisions/0037).
//
// Deliberately not here: authentication, visibility, schemas, redaction,
// refusals and the ledger — all the chain's; this package reads nothing of
// the chain but Run's answers and the tracer it lends a span of. Sessions,
// server-to-client requests, resources and prompts are not served.
package mcp
