package input

import (
	"github.com/garm-dev/garm/daemon/internal/call"
	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
)

// shapeKey names one resolution: a plan (by pointer, so two generations
// never share an entry even when their plans are equal) and a caller shape.
type shapeKey struct {
	plan  *planv1.MessagePlan
	shape call.Shape
}
