package wire_test

import (
	"fmt"

	"github.com/garm-dev/garm/runtime/wire"
)

// The names a tool is served under all derive from its method path and its
// proto service.
func ExampleSubject() {
	subject := wire.Subject("/calc.v1.Calculator/Add")
	fmt.Println(subject)
	fmt.Println(wire.QueueGroup("calc.v1.Calculator"))
	fmt.Println(wire.ServiceName("calc.v1.Calculator"), wire.EndpointName(subject))
	// Output:
	// calc.v1.Calculator.Add
	// calc.v1.Calculator
	// calc_v1_Calculator calc_v1_Calculator_Add
}
