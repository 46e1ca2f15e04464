package reference

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"

	conformancev1 "github.com/garm-dev/garm/conformance/gen/garm/conformance/v1"
	"github.com/garm-dev/garm/runtime/garmtool"
	"github.com/nats-io/nats.go"
)

// ServeProcess serves the reference on the bus at url until the process is
// sent SIGTERM or an interrupt, and returns the process's exit code: 0 after
// a clean drain, 1 when serving failed, 2 when it could not start. It is
// what a test binary runs when the kit's exec mode starts it as the service
// under test.
func ServeProcess(url string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	nc, err := nats.Connect(url)
	if err != nil {
		return 2
	}
	defer nc.Close()
	svc := garmtool.New("conformance-reference", "1.0.0", garmtool.WithDrainTimeout(5*time.Second))
	if err := conformancev1.ServeConformance(svc, Handler{}); err != nil {
		return 2
	}
	if err := svc.Run(ctx, nc); err != nil {
		return 1
	}
	return 0
}
