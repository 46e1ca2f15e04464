package garmtooltest_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/garm-dev/garm/examples/calculator/calculator"
	calcv1 "github.com/garm-dev/garm/examples/calculator/gen/calc/v1"
	"github.com/garm-dev/garm/runtime/garmtool"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/garm-dev/garm/runtime/toolbind"
	"google.golang.org/protobuf/proto"
)

// Testing a tool: serve it on a harness and call it the way garmd would. In
// a test, garmtooltest.Start(t, svc) does what New and Close do here.
func ExampleNew() {
	svc := garmtool.New("calc", "0.1.0")
	if err := calcv1.ServeCalculator(svc, calculator.Calculator{}); err != nil {
		fmt.Println(err)
		return
	}
	h, err := garmtooltest.New(svc)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer h.Close()
	ctx := context.Background()

	var summary calcv1.SummarizeResponse
	err = h.Call(ctx, calcv1.CalculatorTool("summarize"), &calcv1.SummarizeRequest{Values: []float64{3, 1, 4, 1, 5}}, &summary,
		garmtooltest.WithTenant("acme"))
	fmt.Println(summary.GetCount(), summary.GetMean(), summary.GetMedian(), summary.GetMin(), summary.GetMax(), err)

	err = h.Call(ctx, calcv1.CalculatorTool("divide"),
		&calcv1.DivideRequest{Dividend: proto.Float64(1), Divisor: proto.Float64(0)}, new(calcv1.DivideResponse))
	var refusal *toolbind.CodedError
	if errors.As(err, &refusal) {
		fmt.Println(refusal.Code, refusal.Message)
	}
	// Output:
	// 5 2.8 3 1 5 <nil>
	// 422 division by zero
}
