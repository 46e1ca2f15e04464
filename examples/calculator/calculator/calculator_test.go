package calculator_test

import (
	"errors"
	"math"
	"testing"

	"github.com/garm-dev/garm/examples/calculator/calculator"
	calcv1 "github.com/garm-dev/garm/examples/calculator/gen/calc/v1"
	"github.com/garm-dev/garm/runtime/garmtool"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/garm-dev/garm/runtime/toolbind"
	"google.golang.org/protobuf/proto"
)

var (
	add       = calcv1.CalculatorTools[0]
	divide    = calcv1.CalculatorTools[1]
	summarize = calcv1.CalculatorTools[2]
)

// serve runs the calculator on a harness for the test.
func serve(t *testing.T) *garmtooltest.Harness {
	t.Helper()
	svc := garmtool.New("calc", "0.1.0")
	if err := calcv1.ServeCalculator(svc, calculator.Calculator{}); err != nil {
		t.Fatal(err)
	}
	return garmtooltest.Start(t, svc)
}

func TestTheCalculatorServesItsWholeContract(t *testing.T) {
	refs := map[string]bool{}
	for _, ref := range calcv1.CalculatorTools {
		refs[ref.FQN] = true
	}
	for _, fqn := range []string{"calc.v1.add", "calc.v1.divide", "calc.v1.summarize"} {
		if !refs[fqn] {
			t.Errorf("%s is not among the tools", fqn)
		}
	}
}

func TestAddReturnsTheSum(t *testing.T) {
	h := serve(t)
	var out calcv1.AddResponse
	if err := h.Call(garmtooltest.Context(t), add, &calcv1.AddRequest{A: proto.Float64(40), B: proto.Float64(2.5)}, &out); err != nil {
		t.Fatal(err)
	}
	if out.Sum == nil || out.GetSum() != 42.5 {
		t.Fatalf("sum = %v, want 42.5", out.Sum)
	}
}

func TestAddRefusesMissingOrNonFiniteNumbersAndAnOverflow(t *testing.T) {
	h := serve(t)
	tests := []struct {
		name string
		req  *calcv1.AddRequest
		code string
	}{
		{"a missing", &calcv1.AddRequest{B: proto.Float64(1)}, "400"},
		{"b missing", &calcv1.AddRequest{A: proto.Float64(1)}, "400"},
		{"not a number", &calcv1.AddRequest{A: proto.Float64(math.NaN()), B: proto.Float64(1)}, "400"},
		{"infinite", &calcv1.AddRequest{A: proto.Float64(math.Inf(1)), B: proto.Float64(1)}, "400"},
		{"too large a sum", &calcv1.AddRequest{A: proto.Float64(math.MaxFloat64), B: proto.Float64(math.MaxFloat64)}, "422"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			garmtooltest.WantRefusal(t, h.Call(garmtooltest.Context(t), add, tt.req, new(calcv1.AddResponse)), tt.code)
		})
	}
}

func TestDivideReturnsTheQuotient(t *testing.T) {
	h := serve(t)
	var out calcv1.DivideResponse
	if err := h.Call(garmtooltest.Context(t), divide, &calcv1.DivideRequest{Dividend: proto.Float64(10), Divisor: proto.Float64(4)}, &out); err != nil {
		t.Fatal(err)
	}
	if out.GetQuotient() != 2.5 {
		t.Fatalf("quotient = %v, want 2.5", out.GetQuotient())
	}
}

// The contract's guidance tells callers that 422 means a zero divisor.
func TestDivideRefusesAZeroDivisorWith422(t *testing.T) {
	h := serve(t)
	for _, zero := range []float64{0, math.Copysign(0, -1)} {
		err := h.Call(garmtooltest.Context(t), divide, &calcv1.DivideRequest{Dividend: proto.Float64(1), Divisor: proto.Float64(zero)}, new(calcv1.DivideResponse))
		garmtooltest.WantRefusal(t, err, "422")
		var coded *toolbind.CodedError
		if errors.As(err, &coded) && coded.Message != "division by zero" {
			t.Errorf("message %q", coded.Message)
		}
	}
}

func TestDivideRefusesMissingNumbersAndAnOverflow(t *testing.T) {
	h := serve(t)
	garmtooltest.WantRefusal(t, h.Call(garmtooltest.Context(t), divide, &calcv1.DivideRequest{Dividend: proto.Float64(1)}, new(calcv1.DivideResponse)), "400")
	garmtooltest.WantRefusal(t, h.Call(garmtooltest.Context(t), divide,
		&calcv1.DivideRequest{Dividend: proto.Float64(math.MaxFloat64), Divisor: proto.Float64(1e-300)}, new(calcv1.DivideResponse)), "422")
}

func TestSummarizeDescribesTheNumbers(t *testing.T) {
	h := serve(t)
	tests := []struct {
		name                   string
		values                 []float64
		mean, median, min, max float64
	}{
		{"one", []float64{7}, 7, 7, 7, 7},
		{"odd count", []float64{3, 1, 4, 1, 5}, 2.8, 3, 1, 5},
		{"even count", []float64{4, 1, 3, 2}, 2.5, 2.5, 1, 4},
		{"huge numbers do not overflow", []float64{math.MaxFloat64, math.MaxFloat64}, math.MaxFloat64, math.MaxFloat64, math.MaxFloat64, math.MaxFloat64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out calcv1.SummarizeResponse
			if err := h.Call(garmtooltest.Context(t), summarize, &calcv1.SummarizeRequest{Values: tt.values}, &out); err != nil {
				t.Fatal(err)
			}
			if out.GetCount() != uint32(len(tt.values)) || math.Abs(out.GetMean()-tt.mean) > 1e-9*math.Max(1, math.Abs(tt.mean)) ||
				out.GetMedian() != tt.median || out.GetMin() != tt.min || out.GetMax() != tt.max {
				t.Fatalf("summary %v, want count %d mean %v median %v min %v max %v", &out, len(tt.values), tt.mean, tt.median, tt.min, tt.max)
			}
		})
	}
}

func TestSummarizeRefusesAnEmptyOrTooLongListAndNonFiniteNumbers(t *testing.T) {
	h := serve(t)
	for name, values := range map[string][]float64{
		"empty":      nil,
		"too long":   make([]float64, calculator.MaxValues+1),
		"not finite": {1, math.NaN()},
	} {
		t.Run(name, func(t *testing.T) {
			garmtooltest.WantRefusal(t, h.Call(garmtooltest.Context(t), summarize, &calcv1.SummarizeRequest{Values: values}, new(calcv1.SummarizeResponse)), "400")
		})
	}
	var out calcv1.SummarizeResponse
	if err := h.Call(garmtooltest.Context(t), summarize, &calcv1.SummarizeRequest{Values: make([]float64, calculator.MaxValues)}, &out); err != nil || out.GetCount() != calculator.MaxValues {
		t.Fatalf("the longest list: %v, %v", &out, err)
	}
}
