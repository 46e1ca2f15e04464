package bank_test

import (
	"testing"

	"github.com/garm-dev/garm/examples/bank"
	"github.com/garm-dev/garm/examples/bank/accounts"
	"github.com/garm-dev/garm/examples/bank/cards"
	accountsv1 "github.com/garm-dev/garm/examples/bank/gen/accounts/v1"
	cardsv1 "github.com/garm-dev/garm/examples/bank/gen/cards/v1"
	paymentsv1 "github.com/garm-dev/garm/examples/bank/gen/payments/v1"
	"github.com/garm-dev/garm/runtime/garmtool"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/garm-dev/garm/runtime/toolbind"
	"google.golang.org/protobuf/proto"
)

// startServices runs the bank's services, each on a harness of its own.
func startServices(t *testing.T) (accounts, cards, payments *garmtooltest.Harness) {
	t.Helper()
	svcs, err := bank.Services()
	if err != nil {
		t.Fatal(err)
	}
	if len(svcs) != 3 {
		t.Fatalf("%d services, want 3", len(svcs))
	}
	return garmtooltest.Start(t, svcs[0]), garmtooltest.Start(t, svcs[1]), garmtooltest.Start(t, svcs[2])
}

func TestServicesServeEveryToolOfTheContract(t *testing.T) {
	accounts, cards, payments := startServices(t)
	ctx := garmtooltest.Context(t)
	calls := []struct {
		h        *garmtooltest.Harness
		ref      toolbind.ToolRef
		req, out proto.Message
	}{
		{accounts, accountsv1.AccountsServiceTools[0], &accountsv1.GetBalanceRequest{CustomerId: proto.String(bank.DemoCustomer)}, new(accountsv1.GetBalanceResponse)},
		{accounts, accountsv1.AccountsServiceTools[1], &accountsv1.GetCustomerRequest{CustomerId: proto.String(bank.DemoCustomer)}, new(accountsv1.GetCustomerResponse)},
		{cards, cardsv1.CardsServiceTools[0], &cardsv1.ListCardsRequest{CustomerId: proto.String(bank.DemoCustomer)}, new(cardsv1.ListCardsResponse)},
		{cards, cardsv1.CardsServiceTools[1], &cardsv1.FreezeCardRequest{CardId: proto.String(bank.DemoCard), Reason: cardsv1.FreezeReason_FREEZE_REASON_LOST.Enum()}, new(cardsv1.FreezeCardResponse)},
		{cards, cardsv1.CardsServiceTools[2], &cardsv1.UnfreezeCardRequest{CardId: proto.String(bank.DemoCard)}, new(cardsv1.UnfreezeCardResponse)},
		{payments, paymentsv1.PaymentsServiceTools[0], demoPayment(), new(paymentsv1.InitiatePaymentResponse)},
		{payments, paymentsv1.PaymentsServiceTools[1], &paymentsv1.GetPaymentStatusRequest{PaymentId: proto.String("PAY-000001")}, new(paymentsv1.GetPaymentStatusResponse)},
	}
	for _, c := range calls {
		if err := c.h.Call(ctx, c.ref, c.req, c.out, garmtooltest.WithTenant(bank.Tenant)); err != nil {
			t.Errorf("%s: %v", c.ref.FQN, err)
		}
	}
}

// One store backs the three services, as one core banking system backs a
// bank's services: a payment shows in the balance get_balance reports.
func TestAPaymentIsTakenFromTheBalanceGetBalanceReports(t *testing.T) {
	accounts, _, payments := startServices(t)
	ctx := garmtooltest.Context(t)
	available := func() int64 {
		var out accountsv1.GetBalanceResponse
		if err := accounts.Call(ctx, accountsv1.AccountsServiceTools[0], &accountsv1.GetBalanceRequest{CustomerId: proto.String(bank.DemoCustomer)}, &out); err != nil {
			t.Fatal(err)
		}
		for _, a := range out.GetAccounts() {
			if a.GetAccountId() == bank.DemoAccount {
				return a.GetAvailableMinorUnits()
			}
		}
		t.Fatalf("no %s in %v", bank.DemoAccount, &out)
		return 0
	}
	before := available()
	if err := payments.Call(ctx, paymentsv1.PaymentsServiceTools[0], demoPayment(), new(paymentsv1.InitiatePaymentResponse)); err != nil {
		t.Fatal(err)
	}
	if after := available(); after != before-bank.DemoAmountMinorUnits {
		t.Fatalf("available %d after paying %d from %d", after, int64(bank.DemoAmountMinorUnits), before)
	}
}

// Each call of Services is a fresh bank: what one changed, the next does
// not see.
func TestEachCallOfServicesStartsAFreshBank(t *testing.T) {
	for range 2 {
		_, cards, _ := startServices(t)
		req := &cardsv1.FreezeCardRequest{CardId: proto.String(bank.DemoCard), Reason: cardsv1.FreezeReason_FREEZE_REASON_LOST.Enum()}
		if err := cards.Call(garmtooltest.Context(t), cardsv1.CardsServiceTools[1], req, new(cardsv1.FreezeCardResponse)); err != nil {
			t.Fatalf("freezing the demo card of a fresh bank: %v", err)
		}
	}
}

// Why Services returns three services: garmtool refuses to serve two proto
// packages (two descriptor hashes) on one.
func TestOneGarmtoolServiceServesOneProtoPackage(t *testing.T) {
	b, err := bank.NewStore()
	if err != nil {
		t.Fatal(err)
	}
	one := garmtool.New("bank", bank.Version)
	if err := accountsv1.ServeAccountsService(one, accounts.New(b)); err != nil {
		t.Fatal(err)
	}
	if err := cardsv1.ServeCardsService(one, cards.New(b)); err == nil {
		t.Fatal("one garmtool.Service took the tools of accounts.v1 and cards.v1")
	}
}
