package main

import (
	"os"
	"testing"

	"github.com/garm-dev/garm/conformance/reference"
)

// serveReferenceEnv makes the test binary a conformance service for
// garm conformance toolservice --exec: it serves the Go reference on
// $NATS_URL until SIGTERM.
const serveReferenceEnv = "GARM_TEST_SERVE_CONFORMANCE_REFERENCE"

func TestMain(m *testing.M) {
	if os.Getenv(serveReferenceEnv) == "1" {
		os.Exit(reference.ServeProcess(os.Getenv("NATS_URL")))
	}
	os.Exit(m.Run())
}
