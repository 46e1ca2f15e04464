package wire_test

import (
	"context"
	"errors"
	"fmt"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
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

// garmd encodes the invocation into the Garm-Invocation header; the tool
// runtime decodes it strictly and puts it on the handler's context.
func ExampleDecodeInvocation() {
	value, err := wire.EncodeInvocation(&toolv1.InvocationContext{
		CallId:      "evt-1",
		Attribution: &toolv1.CallContext{Tenant: "acme"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	inv, err := wire.DecodeInvocation(value)
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := wire.WithInvocation(context.Background(), inv)
	fmt.Println(wire.InvocationFrom(ctx).GetCallId(), wire.InvocationFrom(ctx).GetAttribution().GetTenant())

	_, err = wire.DecodeInvocation("not base64!")
	fmt.Println(errors.Is(err, wire.ErrMalformedInvocation))
	// Output:
	// evt-1 acme
	// true
}

// Subjects built from what a caller asserts cannot make a wildcard.
func ExampleNotifySubject() {
	fmt.Println(wire.NotifySubject("acme", "payments.v1.initiate_payment"))
	fmt.Println(wire.LedgerSubject("acme.*", "garmd"))
	// Output:
	// garm.v1.notify.acme.payments.v1.initiate_payment
	// garm.v1.ledger.acme__.garmd
}

// A client shows the approver the canonical texts of a tool's material
// fields and asks for a grant over their digest; garmd recomputes the digest
// from the request with RequestMaterialDigest. An absent field has its own
// text, so a grant can bind that a field was left out.
func ExampleMaterialDigest() {
	fmt.Println(wire.MaterialDigest(map[string]string{
		"amount_minor_units": "125000",
		"beneficiary_iban":   "GB29NWBK60161331926819",
		"currency_code":      "GBP",
	}))
	fmt.Println(wire.MaterialDigest(map[string]string{
		"amount_minor_units": "125000",
		"beneficiary_iban":   "GB29NWBK60161331926819",
		"currency_code":      wire.Unset,
	}))
	// Output:
	// sha256:050767261c6a70af99c68e72344389981e728a40661ace42936a6d3d00ac9f71
	// sha256:7c6e0cc61cfdf6b52508ea6e6c36c2ab08e4b252fb3b93d52bb2c563720b5ccb
}
