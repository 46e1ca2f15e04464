// Package devplane runs the whole garm plane in one process, on loopback
// only (design 8), on any catalogue: an embedded NATS server with JetStream
// and everything garmd writes to (the GARM_LEDGER, GARM_AUDIT and
// GARM_NOTIFY streams and the GARM_GRANTS_SPENT and GARM_APPROVALS
// buckets), the dev identity provider with a persona file, the approvals
// service (the inbox where a person approves held calls, garmd's only grant
// issuer, with a key made for the run: decision 0059), garmd with approval
// requests, grants, the ledger stream, the audit sink, notify and MCP on,
// and optionally tool services in the same process. It is what `garm dev` and `make dev` (the bank tour,
// examples/devstack) are built on.
//
// The bus is secured as a deployment's should be (decision 0040): the
// embedded server admits only nkey users, garmd, one per tool package, the
// approvals service, an agent with no rights and the plane itself as the operator that creates
// the streams, each with the permissions natsperm derives from the
// catalogue; every part connects as its own user, from a seed file in the
// plane's temporary directory. A tool author's own process connects with
// its package's seed (garmtool.BusFlags).
//
// Reload builds the catalogue again from its manifest and serves it only if
// it compiles and lints; Watch calls it when the manifest or its protos
// change. A reload admits the identities the new catalogue implies and
// restarts garmd at the same addresses.
//
// Options.Nodes and Options.Replicas make the plane a cluster on loopback:
// several NATS servers clustered, every stream and the bucket with one
// replica per node (at most three) and garmd started with --min-replicas
// to match, the tool services spread over the nodes, and several garmd
// replicas behind a round-robin reverse proxy (net/http/httputil) on
// Options.Listen. With Options.NATSServerBinary and Options.GarmdBinary
// (`make cluster`) the nodes and replicas are child processes, each on a
// configuration the plane writes, their pids in URLs, stopped by pid at
// Close; without them they are embedded. StopNode and StartNode, and POST
// /nodes/<n>/stop|start on the dev endpoint, stop and start one node;
// StartReplica and POST /replicas/<n>/start start a killed replica again
// (decision 0046).
//
// The dev endpoint (Options.DevListen) answers GET /ledger/<event id> with
// that call's ledger row, error_detail included: the one place a tool
// author sees why a call was refused, since refusal reasons never reach the
// wire. It exists here only, on loopback, and answers only requests that
// carry the run's secret in DevSecretHeader: the plane writes it to
// DevSecretFile (under the user's cache directory, the file 0600 in a 0700
// directory), where `garm call` reads it, and removes it at Close.
//
// Every listener of the plane — the identity provider, the approvals
// service (its handler wrapped from outside), the dev endpoint, garmd's
// tool plane and admin listener (garmd's Config.Guard) and a cluster's
// front — serves behind internal/loopback's one guard: a Host that is not
// loopback (a page that rebound its name to 127.0.0.1) and a
// state-changing request a browser marks cross-origin are refused
// (decision 0087). garmd replicas run as processes of their own (`make
// cluster`) are reached through the guarded front; their own ports answer
// as a deployment's garmd does.
//
// With Options.Traces, garmd's spans carry service.name garmd and each
// in-process tool service's spans its Service.Name: one exporter, one
// provider per service (decision 0088).
//
// What it owns: wiring the parts together for a developer's machine. What
// it refuses: to bind anything beyond loopback, to answer a request
// addressed to another name, and to say anything on the dev endpoint
// without the run's secret. What is deliberately not
// here: any configuration a deployment needs. The hash-redaction key is
// random per run and lives in a file only the owner reads; the identity
// provider's signing key lives only in memory, and its issuer does not
// resolve, so nothing the plane signs is trusted anywhere else.
//
// It links the NATS server, which the layout rule allows only here, in
// garmtooltest, and in the commands built on it (decision 0047).
package devplane
