// Command garm is the tool author's one command (issue 20): it scaffolds a
// tool service as a Go module of its own (garm new), runs the whole plane
// on loopback on any catalogue (garm dev), calls a tool through garmd and
// shows why a call was refused (garm call), gets dev tokens (garm token,
// garm idp) and builds and checks catalogues (garm catalogue, the same code
// as garm-catalogue). garm ledger checks the ledger's rows (from the bus,
// a dump or the lake) against the sealer's signed heads offline, proves a
// row or a head, dumps both to files, exports the rows to a Parquet lake
// on S3 (decisions 0129–0131), and makes the sealer's key and JWKS
// (docs/ledger.md); the sealer itself is garm-sealer, a service of its own
// (decision 0110).
//
//	go install github.com/garm-dev/garm/cmd/garm@latest
//	garm new toolservice hr && cd hr && go mod tidy && go tool buf generate && go test ./...
//	garm dev --catalogue catalogue.yaml --personas personas.yaml
//	go run . --nats nats://127.0.0.1:4222 --nats-nkey <seed file garm dev printed>
//	garm call hr.v1.get_employee --as alice '{"employee_id":"E-1001"}'
//
// `go mod tidy` comes first: `go tool` reads go.mod as it is, and garm new
// writes only the scaffold's direct requirements. garm new refuses a module
// path the go command would (golang.org/x/mod/module.CheckPath) before it
// writes anything, and writes the scaffold beside its directory, renaming
// it into place once whole, so a failure leaves nothing half-written.
//
// garm call reads the dev endpoint's ledger rows and tool list with the
// run's secret, from the file the plane wrote for that address
// (devplane.DevSecretFile; --dev-secret-file names another): the endpoint
// answers nothing without it.
//
// garm conformance toolservice holds a tool service written in any language
// to the hop contract with the kit of conformance/toolservice
// (docs/conformance.md); --exec starts the service itself so drain and
// restart are checked too.
//
// garm bus init is the operator's one admin step on a deployed bus: it
// creates every stream and bucket garmd needs, already fenced, with the
// replica count given, fences an existing bucket when that drops no record,
// and confirms each with the check its reader runs at start (decision 0119).
//
// It lives at cmd/garm in the repository's one module, so that `go
// install …/cmd/garm@version` is the whole installation (decision 0047).
// It is a developer's command: garm dev links the NATS server, and nothing
// here but garm bus init is for a deployment, whose programs are garmd and
// the tool services.
package main
