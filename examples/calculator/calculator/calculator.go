package calculator

import (
	"context"
	"fmt"
	"math"
	"slices"

	calcv1 "github.com/garm-dev/garm/examples/calculator/gen/calc/v1"
	"github.com/garm-dev/garm/runtime/toolbind"
	"google.golang.org/protobuf/proto"
)

// MaxValues is the most numbers summarize takes, as the contract declares.
const MaxValues = 10000

// Calculator serves calc.v1.Calculator. It holds no state.
type Calculator struct{}

var _ calcv1.CalculatorHandler = Calculator{}

// Add returns a + b, refusing an answer too large to represent.
func (Calculator) Add(_ context.Context, req *calcv1.AddRequest) (*calcv1.AddResponse, error) {
	if req.A == nil || req.B == nil {
		return nil, toolbind.BadRequest("a and b are both required")
	}
	if err := finite(req.GetA(), req.GetB()); err != nil {
		return nil, err
	}
	sum := req.GetA() + req.GetB()
	if math.IsInf(sum, 0) {
		return nil, toolbind.UnprocessableEntity("the sum is too large to represent")
	}
	return &calcv1.AddResponse{Sum: proto.Float64(sum)}, nil
}

// Divide returns dividend / divisor, refusing a zero divisor and an answer
// too large to represent with 422.
func (Calculator) Divide(_ context.Context, req *calcv1.DivideRequest) (*calcv1.DivideResponse, error) {
	if req.Dividend == nil || req.Divisor == nil {
		return nil, toolbind.BadRequest("dividend and divisor are both required")
	}
	if err := finite(req.GetDividend(), req.GetDivisor()); err != nil {
		return nil, err
	}
	if req.GetDivisor() == 0 {
		return nil, toolbind.UnprocessableEntity("division by zero")
	}
	quotient := req.GetDividend() / req.GetDivisor()
	if math.IsInf(quotient, 0) {
		return nil, toolbind.UnprocessableEntity("the quotient is too large to represent")
	}
	return &calcv1.DivideResponse{Quotient: proto.Float64(quotient)}, nil
}

// Summarize returns the count, mean, median, minimum and maximum of 1 to
// MaxValues finite numbers.
func (Calculator) Summarize(_ context.Context, req *calcv1.SummarizeRequest) (*calcv1.SummarizeResponse, error) {
	values := req.GetValues()
	if len(values) == 0 || len(values) > MaxValues {
		return nil, toolbind.BadRequest(fmt.Sprintf("summarize takes 1 to %d numbers, not %d", MaxValues, len(values)))
	}
	if err := finite(values...); err != nil {
		return nil, err
	}
	sorted := slices.Clone(values)
	slices.Sort(sorted)
	// A running mean never overflows, where a sum of large numbers would.
	mean := 0.0
	for i, v := range sorted {
		mean += (v - mean) / float64(i+1)
	}
	n := len(sorted)
	median := sorted[n/2]
	if n%2 == 0 {
		median = sorted[n/2-1]/2 + sorted[n/2]/2
	}
	return &calcv1.SummarizeResponse{
		Count:  proto.Uint32(uint32(n)),
		Mean:   proto.Float64(mean),
		Median: proto.Float64(median),
		Min:    proto.Float64(sorted[0]),
		Max:    proto.Float64(sorted[n-1]),
	}, nil
}

func finite(values ...float64) error {
	for _, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return toolbind.BadRequest("every number must be finite")
		}
	}
	return nil
}
