//go:build conformance

package minter_test

import (
	"flag"
	"strings"
	"testing"

	"github.com/garm-dev/garm/approvals/pending"
	"github.com/garm-dev/garm/daemon/conformance/minter"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The flags of a run against a minter already running (docs/conformance.md,
// "Minters"): go test -tags conformance ./daemon/conformance/minter -run
// TestAnExternalMinter -args -minter.suite=… -minter.endpoint=….
var (
	suiteFlag     = flag.String("minter.suite", "", "the suite file to run")
	endpointFlag  = flag.String("minter.endpoint", "", "the minter's base URL, or its token endpoint's URL (form-post)")
	varsFlag      = flag.String("minter.vars", "", "further {name} values for the suite's trust, name=value,name=value")
	clientIDFlag  = flag.String("minter.client-id", "", "form-post: the client id registered with the STS")
	clientKeyFlag = flag.String("minter.client-key", "", "form-post: a PEM file of the client's P-256 private key")
	clientKIDFlag = flag.String("minter.client-kid", "", "form-post: the kid of the client's key, if the STS wants one")
	natsFlag      = flag.String("minter.nats", "", "approvals: the NATS URL of the pending bucket garmd records requests in")
	natsCredsFlag = flag.String("minter.nats-creds", "", "approvals: a NATS credentials file")
)

// TestAnExternalMinter runs the suite the flags name against the minter
// they name. It refuses to start without both: a conformance run with
// nothing to check must not report ok.
func TestAnExternalMinter(t *testing.T) {
	if *suiteFlag == "" || *endpointFlag == "" {
		t.Fatal("refusing to run: name a suite and a minter with -args -minter.suite=FILE -minter.endpoint=URL " +
			"(the shipped suites run with -skip TestAnExternalMinter)")
	}
	suite, err := minter.LoadSuite(*suiteFlag)
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	for _, kv := range strings.Split(*varsFlag, ",") {
		if kv == "" {
			continue
		}
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			t.Fatalf("-minter.vars: %q is not name=value", kv)
		}
		vars[name] = value
	}
	cfg := minter.Config{Suite: suite, Endpoint: strings.TrimSuffix(*endpointFlag, "/"), Vars: vars}
	switch suite.Shape {
	case minter.ShapeGet:
		cfg.Driver = &minter.GetDriver{Endpoint: cfg.Endpoint}
	case minter.ShapeFormPost:
		if *clientIDFlag == "" || *clientKeyFlag == "" {
			t.Fatal("a form-post suite needs -minter.client-id and -minter.client-key")
		}
		key, err := minter.LoadClientKey(*clientKeyFlag)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Driver = &minter.FormPostDriver{Endpoint: cfg.Endpoint, ClientID: *clientIDFlag, KeyID: *clientKIDFlag, Key: key}
	case minter.ShapeApprovals:
		if *natsFlag == "" {
			t.Fatal("an approvals suite needs -minter.nats: requests are recorded where garmd records them")
		}
		var opts []nats.Option
		if *natsCredsFlag != "" {
			opts = append(opts, nats.UserCredentials(*natsCredsFlag))
		}
		nc, err := nats.Connect(*natsFlag, opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		store, err := pending.Open(bounded(t), js)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Driver = &approvalsDriver{base: cfg.Endpoint, store: store}
	}
	requirePass(t, run(t, cfg))
}
