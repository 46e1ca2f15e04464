package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/garm-dev/garm/catalogue-builder/builder"
	"github.com/garm-dev/garm/devkit/devplane"
	"github.com/garm-dev/garm/devkit/idp"
	"github.com/garm-dev/garm/examples/bank"
	"github.com/garm-dev/garm/examples/calculator/calculator"
	calcv1 "github.com/garm-dev/garm/examples/calculator/gen/calc/v1"
	"github.com/garm-dev/garm/runtime/garmtool"
)

// The tour runs on the dev plane; these are its names for it.
type (
	// Options configure the tour: the dev plane's, the bank's catalogue,
	// personas and services filled in where they are left empty.
	Options = devplane.Options
	// Stack is the running tour.
	Stack = devplane.Plane
	// URLs are where the tour's parts answer.
	URLs = devplane.URLs
)

// Bus identities besides those the catalogue implies.
const (
	OperatorIdentity = devplane.OperatorIdentity
	AgentIdentity    = devplane.AgentIdentity
)

// The shape of `make cluster` (--cluster): a quorum that survives one node
// lost, and more than one replica to share the calls.
const (
	ClusterNodes    = 3
	ClusterReplicas = 2
)

// serviceVersion is the example services' version on $SRV.INFO.
const serviceVersion = "0.1.0"

// listToolsRoute is garmd's listing (design 7.6); it is not a tool.
const listToolsRoute = devplane.ListToolsRoute

// DefaultOptions is the configuration of `go run ./examples/devstack` with
// no flags.
func DefaultOptions() Options { return devplane.DefaultOptions() }

// Start runs the tour: the dev plane on the bank's catalogue (or
// o.Catalogue), with the calculator's proto root added, the bank's
// personas (or o.Personas), the bank and calculator services in process,
// and the bank's quick-start.
func Start(ctx context.Context, o Options) (*Stack, error) {
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	if o.Catalogue == "" {
		o.Catalogue = filepath.Join(root, bank.ManifestPath)
	}
	if o.Personas == "" {
		o.Personas = filepath.Join(root, bank.PersonasPath)
	}
	o.ExtraRoots = append(o.ExtraRoots, filepath.Join(root, calculatorRoot))
	o.Services = tourServices
	o.QuickStart = bankQuickStart
	return devplane.Start(ctx, o)
}

// calculatorRoot is the calculator's proto root, relative to the repository
// root: the tour serves it beside the bank.
const calculatorRoot = "examples/calculator/proto"

// tourServices are the bank's three services and the calculator.
func tourServices(opts ...garmtool.Option) ([]devplane.Service, error) {
	bankSvcs, err := bank.Services(opts...)
	if err != nil {
		return nil, fmt.Errorf("the bank's services: %w", err)
	}
	var out []devplane.Service
	for i, svc := range bankSvcs {
		name, pkg := bankService(i)
		out = append(out, devplane.Service{Name: name, Package: pkg, Service: svc})
	}
	calcSvc := garmtool.New("calc", serviceVersion, opts...)
	if err := calcv1.ServeCalculator(calcSvc, calculator.Calculator{}); err != nil {
		return nil, fmt.Errorf("the calculator service: %w", err)
	}
	return append(out, devplane.Service{Name: "calculator", Package: "calc.v1", Service: calcSvc}), nil
}

// bankService names the i-th of bank.Services, which come in this order,
// and the proto package it serves.
func bankService(i int) (name, pkg string) {
	services := [][2]string{{"bank accounts", "accounts.v1"}, {"bank cards", "cards.v1"}, {"bank payments", "payments.v1"}}
	if i < len(services) {
		return services[i][0], services[i][1]
	}
	return fmt.Sprintf("bank #%d", i+1), ""
}

// bankQuickStart is the tour's quick-start over the plane's URLs.
func bankQuickStart(c *builder.Catalogue, personas *idp.Personas, urls URLs) (string, error) {
	qs, err := newQuickStart(c, personas, bankDemo())
	if err != nil {
		return "", err
	}
	return qs.render(urls)
}
