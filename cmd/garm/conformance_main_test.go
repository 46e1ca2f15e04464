package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	conformancev1 "github.com/garm-dev/garm/conformance/gen/garm/conformance/v1"
	"github.com/garm-dev/garm/conformance/reference"
	"github.com/garm-dev/garm/runtime/garmtool"
	"github.com/nats-io/nats.go"
)

// serveReferenceEnv makes the test binary a conformance service for
// garm conformance toolservice --exec: it serves the Go reference on
// $NATS_URL until SIGTERM.
const serveReferenceEnv = "GARM_TEST_SERVE_CONFORMANCE_REFERENCE"

func TestMain(m *testing.M) {
	if os.Getenv(serveReferenceEnv) == "1" {
		os.Exit(serveReferenceProcess(os.Getenv("NATS_URL")))
	}
	os.Exit(m.Run())
}

func serveReferenceProcess(url string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	nc, err := nats.Connect(url)
	if err != nil {
		return 2
	}
	defer nc.Close()
	svc := garmtool.New("conformance-reference", "1.0.0", garmtool.WithDrainTimeout(5*time.Second))
	if err := conformancev1.ServeConformance(svc, reference.Handler{}); err != nil {
		return 2
	}
	if err := svc.Run(ctx, nc); err != nil {
		return 1
	}
	return 0
}
