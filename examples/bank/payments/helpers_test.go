package payments_test

import (
	"sync"
	"testing"
	"time"

	"github.com/garm-dev/garm/examples/bank"
	paymentsv1 "github.com/garm-dev/garm/examples/bank/gen/payments/v1"
	"github.com/garm-dev/garm/examples/bank/payments"
	"github.com/garm-dev/garm/examples/bank/store"
	"github.com/garm-dev/garm/runtime/garmtool"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"google.golang.org/protobuf/proto"
)

var (
	initiatePayment  = paymentsv1.PaymentsServiceTools[0]
	getPaymentStatus = paymentsv1.PaymentsServiceTools[1]
	start            = time.Date(2025, time.November, 28, 9, 30, 0, 0, time.UTC)
)

// clock is a time the test moves.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// fixture is the payments service on a harness, over a demo store whose
// clock the test moves.
type fixture struct {
	*garmtooltest.Harness
	bank  *store.Bank
	clock *clock
}

func serve(t *testing.T) *fixture {
	t.Helper()
	c := &clock{now: start}
	b, err := bank.NewStore(store.WithClock(c.Now))
	if err != nil {
		t.Fatal(err)
	}
	svc := garmtool.New("bank-payments", bank.Version, garmtool.WithConcurrency(8))
	if err := paymentsv1.ServePaymentsService(svc, payments.New(b)); err != nil {
		t.Fatal(err)
	}
	return &fixture{Harness: garmtooltest.Start(t, svc), bank: b, clock: c}
}

// demoPayment is the quick-start's payment.
func demoPayment() *paymentsv1.InitiatePaymentRequest {
	return &paymentsv1.InitiatePaymentRequest{
		FromAccountId:    proto.String(bank.DemoAccount),
		AmountMinorUnits: proto.Int64(bank.DemoAmountMinorUnits),
		CurrencyCode:     proto.String(bank.DemoCurrency),
		BeneficiaryName:  proto.String(bank.DemoBeneficiaryName),
		BeneficiaryIban:  proto.String(bank.DemoBeneficiaryIBAN),
		Reference:        proto.String(bank.DemoReference),
	}
}

func (f *fixture) pay(t *testing.T, req *paymentsv1.InitiatePaymentRequest, opts ...garmtooltest.CallOption) (*paymentsv1.Payment, error) {
	t.Helper()
	var out paymentsv1.InitiatePaymentResponse
	err := f.Call(garmtooltest.Context(t), initiatePayment, req, &out, opts...)
	return out.GetPayment(), err
}

func (f *fixture) status(t *testing.T, id string) (*paymentsv1.Payment, error) {
	t.Helper()
	var out paymentsv1.GetPaymentStatusResponse
	err := f.Call(garmtooltest.Context(t), getPaymentStatus, &paymentsv1.GetPaymentStatusRequest{PaymentId: proto.String(id)}, &out)
	return out.GetPayment(), err
}

// available is what the demo account has available now.
func (f *fixture) available(t *testing.T) int64 {
	t.Helper()
	balances, _, err := f.bank.Balances(bank.DemoCustomer)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range balances {
		if b.ID == bank.DemoAccount {
			return b.Available
		}
	}
	t.Fatalf("%s holds no %s", bank.DemoCustomer, bank.DemoAccount)
	return 0
}
