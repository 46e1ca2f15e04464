package natsbus_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/garm-dev/garm/daemon/internal/transport"
	"github.com/garm-dev/garm/daemon/internal/transport/natsbus"
	"github.com/garm-dev/garm/runtime/garmtooltest"
)

// BenchmarkRequest is one answered request with the chain's context (one
// that cannot end) and a deadline, against a tool on the same server.
func BenchmarkRequest(b *testing.B) {
	srv := garmtooltest.StartServer(b)
	tool, err := nats.Connect(srv.URL())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(tool.Close)
	if _, err := tool.Subscribe("t.v1.Echo.Call", func(m *nats.Msg) { _ = m.Respond(m.Data) }); err != nil {
		b.Fatal(err)
	}
	if err := tool.Flush(); err != nil {
		b.Fatal(err)
	}
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(nc.Close)
	r := natsbus.New(nc)
	ctx := context.WithoutCancel(context.Background())
	body := []byte("ping")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Request(ctx, &transport.Request{Subject: "t.v1.Echo.Call", Invocation: "inv", Body: body, Deadline: time.Now().Add(5 * time.Second)}); err != nil {
			b.Fatal(err)
		}
	}
}
