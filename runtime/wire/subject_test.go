package wire_test

import (
	"testing"

	"github.com/garm-dev/garm/runtime/wire"
)

func TestNamesDeriveFromTheMethodPath(t *testing.T) {
	const method = "/calc.v1.Calculator/Add"
	tests := []struct {
		name, got, want string
	}{
		{"subject", wire.Subject(method), "calc.v1.Calculator.Add"},
		{"queue group", wire.QueueGroup("calc.v1.Calculator"), "calc.v1.Calculator"},
		{"service name", wire.ServiceName("calc.v1.Calculator"), "calc_v1_Calculator"},
		{"endpoint name", wire.EndpointName(wire.Subject(method)), "calc_v1_Calculator_Add"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}
