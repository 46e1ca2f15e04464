package bank_test

import (
	"context"
	"fmt"

	"github.com/garm-dev/garm/examples/bank"
	accountsv1 "github.com/garm-dev/garm/examples/bank/gen/accounts/v1"
	paymentsv1 "github.com/garm-dev/garm/examples/bank/gen/payments/v1"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/garm-dev/garm/runtime/wire"
	"google.golang.org/protobuf/proto"
)

// Serving the bank: three services, one per proto package, over one store.
// Each is Run on a NATS connection; here, on test harnesses, called the way
// garmd calls them. The tool answers in full: garmd, not the tool, cuts the
// email to its domain for a support agent.
func ExampleServices() {
	svcs, err := bank.Services()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(svcs), "services")
	h, err := garmtooltest.New(svcs[0]) // accounts.v1.AccountsService
	if err != nil {
		fmt.Println(err)
		return
	}
	defer h.Close()

	var customer accountsv1.GetCustomerResponse
	err = h.Call(context.Background(), accountsv1.AccountsServiceTools[1],
		&accountsv1.GetCustomerRequest{CustomerId: proto.String(bank.DemoCustomer)}, &customer,
		garmtooltest.WithTenant(bank.Tenant))
	fmt.Println(customer.GetDisplayName(), customer.GetEmail(), err)
	// Output:
	// 3 services
	// Priya Raman priya.raman@example.com <nil>
}

// What an approver grants for the quick-start's payment: the digest of its
// material fields — the account that pays among them — which garmd
// recomputes from the request it is presented with.
func Example_grantMaterial() {
	req := &paymentsv1.InitiatePaymentRequest{
		FromAccountId:    proto.String(bank.DemoAccount),
		AmountMinorUnits: proto.Int64(bank.DemoAmountMinorUnits),
		CurrencyCode:     proto.String(bank.DemoCurrency),
		BeneficiaryName:  proto.String(bank.DemoBeneficiaryName),
		BeneficiaryIban:  proto.String(bank.DemoBeneficiaryIBAN),
	}
	material := []string{"from_account_id", "amount_minor_units", "currency_code", "beneficiary_iban"}
	texts, err := wire.MaterialTexts(req.ProtoReflect(), material)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, path := range material {
		fmt.Printf("%s=%s\n", path, texts[path])
	}
	fmt.Println(wire.MaterialDigest(texts))
	// Output:
	// from_account_id=A-10001
	// amount_minor_units=125000
	// currency_code=GBP
	// beneficiary_iban=GB29NWBK60161331926819
	// sha256:9afee02cf5f54ae57ba5164981aa79afa7f9772f78ca145b71f76e796a1b7051
}
