package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
)

// The default addresses (SPEC 8), each a flag.
const (
	DefaultNATSListen  = "127.0.0.1:4222"
	DefaultIdPListen   = "127.0.0.1:7450"
	DefaultListen      = "127.0.0.1:7440"
	DefaultAdminListen = "127.0.0.1:7441"
)

// Options configures the dev stack: one field per flag of the command.
// DefaultOptions holds the flags' defaults.
type Options struct {
	// NATSListen is the embedded NATS server's address (--nats-listen).
	NATSListen string
	// IdPListen is the dev identity provider's address (--idp-listen).
	IdPListen string
	// Listen is garmd's tool plane (--listen).
	Listen string
	// AdminListen is garmd's health, readiness and metrics listener
	// (--admin-listen).
	AdminListen string
	// DataDir keeps JetStream's store across runs (--data). Empty: a
	// temporary directory, removed at Close.
	DataDir string
	// CatalogueManifest is the catalogue.yaml built at start
	// (--catalogue-manifest). Empty: the bank's, bank.ManifestPath under the
	// repository root. The calculator's proto root is added to it.
	CatalogueManifest string
	// Personas is the dev identity provider's persona file (--personas).
	// Empty: the bank's, bank.PersonasPath under the repository root.
	Personas string
	// Verbose logs at info level (--verbose); otherwise warnings and errors
	// only.
	Verbose bool
	// Logs receives every component's log lines; nil is standard error.
	Logs io.Writer
	// Ledger, when set, receives one line per ledger row as it lands on
	// GARM_LEDGER (--ledger).
	Ledger io.Writer
}

// DefaultOptions is the configuration of `go run ./examples/devstack` with
// no flags.
func DefaultOptions() Options {
	return Options{
		NATSListen:  DefaultNATSListen,
		IdPListen:   DefaultIdPListen,
		Listen:      DefaultListen,
		AdminListen: DefaultAdminListen,
	}
}

// Validate reports every problem at once: above all, a listener that is not
// on loopback.
func (o Options) Validate() error {
	var problems []error
	for _, l := range []struct{ flag, addr string }{
		{"--nats-listen", o.NATSListen},
		{"--idp-listen", o.IdPListen},
		{"--listen", o.Listen},
		{"--admin-listen", o.AdminListen},
	} {
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
		return errors.New("the dev stack listens on loopback only (127.0.0.1, ::1 or localhost)")
	}
	return nil
}

// URLs are where the stack's parts answer.
type URLs struct {
	// Garmd is garmd's tool plane, http://host:port.
	Garmd string
	// MCP is garmd's MCP endpoint on the tool plane, http://host:port/mcp.
	MCP string
	// Admin is garmd's admin listener (/healthz, /readyz, /metrics).
	Admin string
	// IdP is the dev identity provider.
	IdP string
	// NATS is the embedded NATS server, nats://host:port.
	NATS string
	// NATSSeeds is the directory holding the nkey seed of each identity
	// on the bus, one file each, <identity>.nk.
	NATSSeeds string
}
