package devplane

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/garm-dev/garm/catalogue-builder/builder"
	"github.com/garm-dev/garm/devkit/idp"
	"github.com/garm-dev/garm/runtime/garmtool"
)

// The default addresses (design 8), each a flag.
const (
	DefaultNATSListen  = "127.0.0.1:4222"
	DefaultIdPListen   = "127.0.0.1:7450"
	DefaultListen      = "127.0.0.1:7440"
	DefaultAdminListen = "127.0.0.1:7441"
	DefaultDevListen   = "127.0.0.1:7442"
	// DefaultApprovalsListen is the approvals service's inbox.
	DefaultApprovalsListen = "127.0.0.1:7451"
)

// Options configures the dev plane. DefaultOptions holds the defaults of
// `garm dev` and `make dev`.
type Options struct {
	// NATSListen is the embedded NATS server's address (--nats-listen).
	NATSListen string
	// IdPListen is the dev identity provider's address (--idp-listen).
	IdPListen string
	// ApprovalsListen is the approvals service's address (--approvals-listen):
	// the inbox where a human approves what garmd holds for a grant.
	ApprovalsListen string
	// Listen is garmd's tool plane (--listen).
	Listen string
	// AdminListen is garmd's health, readiness and metrics listener
	// (--admin-listen).
	AdminListen string
	// DevListen is the dev plane's own endpoint (--dev-listen): the ledger
	// rows of this run by event id, which `garm call` reads to say why a
	// call was refused. Empty: none.
	DevListen string
	// DataDir keeps JetStream's store across runs (--data). Empty: a
	// temporary directory, removed at Close.
	DataDir string
	// Catalogue is the catalogue served (--catalogue): a catalogue.yaml,
	// built from source at start and at every Reload, or a built artifact
	// (any other file), served as it is. Required.
	Catalogue string
	// ExtraRoots are proto roots added to a manifest's include list.
	ExtraRoots []string
	// Personas is the dev identity provider's persona file (--personas).
	// Required.
	Personas string
	// Services, when set, makes the tool services the plane runs in its
	// own process, each connected to the bus as its package's identity.
	// Tools served by processes of their own need none.
	Services func(...garmtool.Option) ([]Service, error)
	// QuickStart renders the text printed once the plane is ready. Nil:
	// GenericQuickStart.
	QuickStart func(*builder.Catalogue, *idp.Personas, URLs) (string, error)
	// Verbose logs at info level (--verbose); otherwise warnings and errors
	// only.
	Verbose bool
	// Logs receives every component's log lines; nil is standard error.
	Logs io.Writer
	// Nodes is how many NATS servers the bus is: 0 or 1 a single one on
	// NATSListen; more a cluster on loopback, the first on NATSListen and
	// the others on free ports, every stream and the bucket with one
	// replica per node (at most 3), which garmd checks at startup.
	Nodes int
	// NATSServerBinary, when set on a cluster, runs each node as a process
	// of this nats-server binary rather than embedded: its configuration
	// file and log in the run directory, its pid in the quick-start, so it
	// can be killed from outside.
	NATSServerBinary string
	// GarmdBinary, when set, runs each garmd replica as a process of this
	// binary rather than in this one, its log in the run directory.
	GarmdBinary string
	// Replicas is how many garmd replicas serve the plane: 0 or 1 one on
	// Listen and AdminListen; more each on free loopback ports behind a
	// round-robin reverse proxy on Listen, the first one's admin listener
	// on AdminListen.
	Replicas int
	// Ledger, when set, receives one line per ledger row as it lands on
	// GARM_LEDGER (--ledger).
	Ledger io.Writer
	// Traces, when set, traces every call through garmd and the in-process
	// tools (--traces): each call's span tree is printed to it, or, when
	// the standard OTEL_EXPORTER_OTLP_ENDPOINT (or _TRACES_ENDPOINT) is
	// set, exported there over OTLP instead. garmd replicas run as
	// processes of their own read the variables themselves.
	Traces io.Writer
}

// Service is a tool service the plane runs in its own process.
type Service struct {
	// Name names it in logs and errors.
	Name string
	// Package is the proto package it serves, whose bus identity it
	// connects as.
	Package string
	// Service is the service, its tools registered.
	Service *garmtool.Service
}

// DefaultOptions are the defaults of `garm dev`: design 8's addresses.
func DefaultOptions() Options {
	return Options{
		NATSListen:      DefaultNATSListen,
		IdPListen:       DefaultIdPListen,
		ApprovalsListen: DefaultApprovalsListen,
		Listen:          DefaultListen,
		AdminListen:     DefaultAdminListen,
		DevListen:       DefaultDevListen,
	}
}

// Validate reports every problem at once: above all, a listener that is not
// on loopback.
func (o Options) Validate() error {
	problems := []error{o.ValidateListeners()}
	if o.Catalogue == "" {
		problems = append(problems, errors.New("--catalogue: no catalogue named"))
	}
	if o.Personas == "" {
		problems = append(problems, errors.New("--personas: no persona file named"))
	}
	if o.Nodes > 1 && o.DevListen == "" {
		problems = append(problems, errors.New("--dev-listen: a cluster's nodes are stopped and started through the dev endpoint; give it an address"))
	}
	return errors.Join(problems...)
}

// ValidateListeners reports every listener that is not on loopback.
func (o Options) ValidateListeners() error {
	var problems []error
	for _, l := range []struct{ flag, addr string }{
		{"--nats-listen", o.NATSListen},
		{"--idp-listen", o.IdPListen},
		{"--approvals-listen", o.ApprovalsListen},
		{"--listen", o.Listen},
		{"--admin-listen", o.AdminListen},
		{"--dev-listen", o.DevListen},
	} {
		if l.flag == "--dev-listen" && l.addr == "" {
			continue
		}
		if err := checkLoopback(l.addr); err != nil {
			problems = append(problems, fmt.Errorf("%s %q: %w", l.flag, l.addr, err))
		}
	}
	return errors.Join(problems...)
}

// checkLoopback accepts host:port whose host is a literal loopback IP or
// "localhost". Other names are not resolved: what they mean can change.
func checkLoopback(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return errors.New("not host:port")
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return errors.New("not a port")
	}
	if ip := net.ParseIP(host); (ip == nil || !ip.IsLoopback()) && !strings.EqualFold(host, "localhost") {
		return errors.New("the dev plane listens on loopback only (127.0.0.1, ::1 or localhost)")
	}
	return nil
}

// URLs are where the plane's parts answer.
type URLs struct {
	// Garmd is garmd's tool plane, http://host:port.
	Garmd string
	// MCP is garmd's MCP endpoint on the tool plane, http://host:port/mcp.
	MCP string
	// Admin is garmd's admin listener (/healthz, /readyz, /metrics).
	Admin string
	// IdP is the dev identity provider.
	IdP string
	// Approvals is the approvals service's inbox: a request's page is
	// <Approvals>/requests/<id>.
	Approvals string
	// NATS is the embedded NATS server, nats://host:port; on a cluster,
	// every node's URL, a seed list.
	NATS string
	// Nodes are the cluster's nodes' client URLs, node 1 first; one on a
	// single server.
	Nodes []string
	// Replicas are the garmd replicas' tool planes behind the front at
	// Garmd; Garmd itself when there is one.
	Replicas []string
	// ReplicaAdmins are the replicas' admin listeners, in the same order.
	ReplicaAdmins []string
	// NodePIDs and ReplicaPIDs are the process ids of the nodes and the
	// replicas, in the same order as Nodes and Replicas, when they run as
	// processes (Options.NATSServerBinary, Options.GarmdBinary): nil when
	// they are embedded. A node started again has a new one.
	NodePIDs, ReplicaPIDs []int
	// Logs is the directory holding each process's log, <name>.log.
	Logs string
	// Dev is the dev plane's own endpoint: GET /ledger/<event id>.
	Dev string
	// DevSecretFile holds the secret every request to Dev carries in the
	// DevSecretHeader header; it is DevSecretFile(Dev), removed at Close.
	DevSecretFile string
	// NATSSeeds is the directory holding the nkey seed of each identity
	// on the bus, one file each, <identity>.nk.
	NATSSeeds string
}
