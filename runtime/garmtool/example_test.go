package garmtool_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/garm-dev/garm/examples/calculator/calculator"
	calcv1 "github.com/garm-dev/garm/examples/calculator/gen/calc/v1"
	"github.com/garm-dev/garm/runtime/garmtool"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/garm-dev/garm/runtime/toolbind"
	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/proto"
)

// Serving a tool: register the generated bindings on a Service and Run it on
// a NATS connection until the context ends. Here the server is an embedded
// one and the calls are made the way garmd makes them.
func ExampleService_Run() {
	server, err := garmtooltest.NewServer()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer server.Close()
	nc, err := nats.Connect(server.URL())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer nc.Close()

	svc := garmtool.New("calc", "v0.1.0", garmtool.WithConcurrency(2))
	if err := calcv1.ServeCalculator(svc, calculator.Calculator{}); err != nil {
		fmt.Println(err)
		return
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx, nc) }()
	select {
	case <-svc.Ready():
	case err := <-done:
		fmt.Println(err)
		return
	}

	var sum calcv1.AddResponse
	err = garmtooltest.Call(ctx, nc, calcv1.CalculatorTool("add"),
		&calcv1.AddRequest{A: proto.Float64(40), B: proto.Float64(2.5)}, &sum)
	fmt.Println(sum.GetSum(), err)

	var quotient calcv1.DivideResponse
	err = garmtooltest.Call(ctx, nc, calcv1.CalculatorTool("divide"),
		&calcv1.DivideRequest{Dividend: proto.Float64(1), Divisor: proto.Float64(0)}, &quotient)
	var refusal *toolbind.CodedError
	if errors.As(err, &refusal) {
		fmt.Println(refusal.Code, refusal.Message)
	}

	stop()
	fmt.Println("drained:", <-done)
	// Output:
	// 42.5 <nil>
	// 422 division by zero
	// drained: <nil>
}
