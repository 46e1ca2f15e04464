package toolbind_test

import (
	"errors"
	"fmt"

	"github.com/garm-dev/garm/runtime/toolbind"
)

// A tool refuses with a CodedError; wrapping it with %w keeps it findable, so
// the runtime still publishes the tool's code.
func ExampleCodedError() {
	lookup := func(id string) error {
		return &toolbind.CodedError{Code: "404", Message: "no customer " + id}
	}
	err := fmt.Errorf("get_customer: %w", lookup("c-17"))

	var refusal *toolbind.CodedError
	if errors.As(err, &refusal) {
		fmt.Println(refusal.Code, refusal.Message)
	}
	// Output: 404 no customer c-17
}

// The constructors named after each refusal code make a refusal one line.
func ExampleUnprocessableEntity() {
	divide := func(dividend, divisor float64) (float64, error) {
		if divisor == 0 {
			return 0, toolbind.UnprocessableEntity("division by zero")
		}
		return dividend / divisor, nil
	}
	_, err := divide(1, 0)

	var refusal *toolbind.CodedError
	if errors.As(err, &refusal) {
		fmt.Println(refusal.Code, refusal.Message, toolbind.IsRefusalCode(refusal.Code))
	}
	// Output: 422 division by zero true
}
