package garmtool_test

import (
	"context"
	"testing"
	"time"

	"github.com/garm-dev/garm/examples/calculator/calculator"
	calcv1 "github.com/garm-dev/garm/examples/calculator/gen/calc/v1"
	"github.com/garm-dev/garm/runtime/garmtool"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"google.golang.org/protobuf/proto"
)

// BenchmarkRoundTrip is one call of the calculator's add, request to
// answer, through garmtool and through a bare micro handler doing the same
// work (unmarshal, add, marshal) on the same embedded server. Both requests
// carry the same Garm-Invocation header, so the difference is what the
// runtime does with it: decode the invocation, admit, check the deadline,
// refuse unknown fields, build the handler's context.
func BenchmarkRoundTrip(b *testing.B) {
	server := garmtooltest.StartServer(b)
	serviceConn, callerConn := connect(b, server.URL()), connect(b, server.URL())
	add := calcv1.CalculatorTools[0]

	svc := garmtool.New("calc", "1.0.0", garmtool.WithConcurrency(1))
	if err := calcv1.ServeCalculator(svc, calculator.Calculator{}); err != nil {
		b.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx, serviceConn) }()
	b.Cleanup(func() { stop(); <-done })
	<-svc.Ready()

	bare, err := micro.AddService(serviceConn, micro.Config{Name: "bare", Version: "1.0.0"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = bare.Stop() })
	const bareSubject = "bench.bare.add"
	if err := bare.AddEndpoint("add", micro.HandlerFunc(func(req micro.Request) {
		in := new(calcv1.AddRequest)
		if err := proto.Unmarshal(req.Data(), in); err != nil {
			_ = req.Error("400", "bad request", nil)
			return
		}
		out, err := calculator.Calculator{}.Add(context.Background(), in)
		if err != nil {
			_ = req.Error("500", err.Error(), nil)
			return
		}
		data, err := proto.Marshal(out)
		if err != nil {
			_ = req.Error("500", "marshal", nil)
			return
		}
		_ = req.Respond(data)
	}), micro.WithEndpointSubject(bareSubject)); err != nil {
		b.Fatal(err)
	}
	if err := serviceConn.Flush(); err != nil {
		b.Fatal(err)
	}

	body, err := proto.Marshal(&calcv1.AddRequest{A: proto.Float64(40), B: proto.Float64(2.5)})
	if err != nil {
		b.Fatal(err)
	}
	invocation, err := wire.EncodeInvocation(garmtooltest.NewInvocation(garmtooltest.WithDeadline(time.Now().Add(time.Hour))))
	if err != nil {
		b.Fatal(err)
	}
	header := nats.Header{wire.InvocationHeader: {invocation}}

	roundTrip := func(b *testing.B, subject string) {
		var out calcv1.AddResponse
		for b.Loop() {
			reply, err := callerConn.RequestMsg(&nats.Msg{Subject: subject, Header: header, Data: body}, 10*time.Second)
			if err != nil {
				b.Fatal(err)
			}
			if err := garmtooltest.Answer(reply, &out); err != nil || out.GetSum() != 42.5 {
				b.Fatalf("answered %v, %v", out.GetSum(), err)
			}
		}
	}
	b.Run("garmtool", func(b *testing.B) { roundTrip(b, wire.Subject(add.Method)) })
	b.Run("bare_micro", func(b *testing.B) { roundTrip(b, bareSubject) })
}
