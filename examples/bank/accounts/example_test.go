package accounts_test

import (
	"context"
	"fmt"

	"github.com/garm-dev/garm/examples/bank"
	"github.com/garm-dev/garm/examples/bank/accounts"
	accountsv1 "github.com/garm-dev/garm/examples/bank/gen/accounts/v1"
	"google.golang.org/protobuf/proto"
)

// A handler is a plain Go method: called directly, as here, it answers
// exactly what garmd receives — the whole record. garmd, not the tool,
// shows a support agent only the email's domain.
func ExampleService_GetCustomer() {
	b, err := bank.NewStore()
	if err != nil {
		fmt.Println(err)
		return
	}
	svc := accounts.New(b)
	c, err := svc.GetCustomer(context.Background(), &accountsv1.GetCustomerRequest{CustomerId: proto.String(bank.DemoCustomer)})
	fmt.Println(c.GetDisplayName(), c.GetEmail(), c.GetNationalId(), err)

	_, err = svc.GetCustomer(context.Background(), &accountsv1.GetCustomerRequest{CustomerId: proto.String("C-9999")})
	fmt.Println(err)
	// Output:
	// Priya Raman priya.raman@example.com QQ123456C <nil>
	// no customer has id C-9999
}
