// Package mcp is garmd's Model Context Protocol endpoint: POST /mcp on the
// tool plane (Streamable HTTP, stateless, JSON answers) and the protected
// resource metadata that points an MCP client at its authorization servers
// (RFC 9728).
//
// It owns the wire of MCP and nothing of policy. tools/list is the caller's
// own listing from listing.Lister (the one visibility predicate, the same
// projected input schemas as ListTools), paged with a cursor bound to the
// generation and to the last tool shown. tools/call becomes a chain.Request
// and runs chain.Run in process: the same ten steps, the same ledger row,
// the same event id as the HTTP route; its answer is mapped to an MCP result
// by one table (mapping.go). The lifecycle methods (initialize, ping,
// server/discover) are the official Go SDK's, behind a gate that answers
// everything the SDK would answer with words of the request.
//
// It refuses, before anything is decided: a method other than POST (405), a
// foreign Origin or a Host a loopback listener does not serve (403), a body
// that is not one JSON-RPC request (batches, malformed JSON, duplicated
// members), a media type other than JSON, a body over the limit, and a
// protocol version it does not serve — each with a static JSON-RPC error,
// never a word of the request. A missing or bad token is 401 with a pointer
// to the resource metadata, and one ledger row, as on the HTTP route.
//
// Why a gate in front of the SDK rather than the SDK alone: the SDK's
// transport answers some malformed requests with the request's own words,
// accepts a foreign Origin, and marks list results publicly cacheable by
// default; garm's answers are per caller and static. Why tools/list and
// tools/call are answered here rather than as SDK tool handlers: the SDK
// keeps one global tool registry, and garm has no global list — each caller
// has its own, decided per request (docs/decisions/0037).
//
// A call waiting for a human's approval (approval.go) is answered in the
// shape its revision has for it: input_required with a URL elicitation of
// the request's page and an HMAC-sealed requestState on 2026-07-28, the
// -32042 URL elicitation error on 2025-11-25 for a call declaring the
// capability, the isError result otherwise. The retry's state is verified
// here; the grant it leads to is checked and spent by the chain
// (docs/decisions/0052).
//
// Deliberately not here: authentication (chain step 1's Authenticator,
// the same issuers, key sets and cache), visibility, schemas, redaction and
// the ledger's columns — all the chain's. Sessions, server-to-client
// requests, resources and prompts are not served.
package mcp
