// Command devstack is the bank tour: the whole garm plane in one process,
// on loopback only (design 8), as devkit/devplane runs it — an embedded NATS
// server with JetStream and everything garmd writes to (the GARM_LEDGER,
// GARM_AUDIT and GARM_NOTIFY streams, the GARM_LIMITS_* counter streams and
// the GARM_GRANTS_SPENT and GARM_APPROVALS buckets), the dev identity
// provider, the approvals service's inbox, and garmd with approval requests
// and grants, the ledger stream, the audit sink, notify, limits and MCP on —
// serving the example bank: its
// catalogue (with the calculator's tools added) built from source at start,
// its personas, and the bank and calculator tool services in this process.
// Once everything answers, it prints a quick-start of copy-pasteable
// commands: a token per persona, a listing, one customer seen by two
// personas, a payment that asks for, spends and cannot reuse an approval,
// and the bank's instance rules: an agent shown only the accounts it may act
// on, refused another customer with the rule's id, answered another
// customer's payment exactly as a missing one, and refused a payment over
// its cap before any approval is asked; and last an agent listing its
// customer's cards until it meets its limit, 429 rate_limited with
// Retry-After, while the customer himself is still served.
//
//	make dev                      # go run ./examples/devstack
//	go run ./examples/devstack --ledger --verbose
//	go run ./examples/devstack --listen 127.0.0.1:8440 --data .tmp/devstack
//	make cluster                  # go run ./examples/devstack --cluster
//
// The bus is secured as a deployment's should be (decision 0040): the
// embedded server admits only nkey users, garmd, one per tool package, the
// approvals service, an agent with no rights and the stack itself as the
// operator that creates the streams, each with the permissions
// garm-catalogue nats-permissions derives from the catalogue; every part connects as its own user, from a
// seed file in the temporary directory.
//
// Each listener is a flag (--nats-listen, --idp-listen, --approvals-listen,
// --listen, --admin-listen, --dev-listen) and refuses any address that is
// not loopback. JetStream
// keeps its store in a temporary directory unless --data names one, and the
// streams are created or brought to the expected configuration, so a reused
// directory starts as a fresh one does. --ledger prints each ledger row as it
// lands, in columns and never with a value of the call. SIGINT or SIGTERM
// drains everything in order: garmd (calls in flight finish, the ledger
// flushes), the tool services, the identity provider, NATS; then the
// temporary directory is removed.
//
// --cluster (make cluster) runs the same plane as a cluster on loopback:
// three nats-server processes clustered with every stream and the
// spent-grant bucket R3 and fenced, the tool services spread over the
// nodes, and two garmd processes (each connected first to its own node,
// started with --min-replicas 3) behind a round-robin reverse proxy on
// --listen, in this process. The quick-start adds every pid, the kill -9
// commands, and the dev endpoint's commands that start a killed node or
// replica again (decision 0046).
//
// What it owns: the tour — the bank's catalogue, personas, services and
// quick-start, and the command line; wiring the parts together is
// devkit/devplane's, which `garm dev` runs on an author's own catalogue.
// What it refuses: to bind anything beyond loopback. What is deliberately
// not here: any configuration a deployment needs. The hash-redaction key is random per
// run and lives in a file only the owner reads, in the temporary directory;
// the identity provider's signing key lives only in memory, and its issuer
// does not resolve, so nothing the stack signs is trusted anywhere else.
//
// Why it is one process: the plane is several programs talking over a bus,
// and a newcomer should see it work end to end in one command before
// running any of them alone. Start and Options are the same entry point
// the tests use, so the tour they walk is the tour this command prints.
package main
