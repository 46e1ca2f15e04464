package accounts_test

import (
	"testing"
	"time"

	"github.com/garm-dev/garm/examples/bank"
	"github.com/garm-dev/garm/examples/bank/accounts"
	accountsv1 "github.com/garm-dev/garm/examples/bank/gen/accounts/v1"
	"github.com/garm-dev/garm/examples/bank/store"
	"github.com/garm-dev/garm/runtime/garmtool"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"google.golang.org/protobuf/proto"
)

var (
	getBalance  = accountsv1.AccountsServiceTools[0]
	getCustomer = accountsv1.AccountsServiceTools[1]
	now         = time.Date(2025, time.November, 28, 9, 30, 0, 0, time.UTC)
)

// serve runs the accounts service over a fresh demo store on a harness.
func serve(t *testing.T) *garmtooltest.Harness {
	t.Helper()
	b, err := bank.NewStore(store.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	svc := garmtool.New("bank-accounts", bank.Version)
	if err := accountsv1.ServeAccountsService(svc, accounts.New(b)); err != nil {
		t.Fatal(err)
	}
	return garmtooltest.Start(t, svc)
}

func TestTheServiceServesBothTools(t *testing.T) {
	if getBalance.FQN != "accounts.v1.get_balance" || getCustomer.FQN != "accounts.v1.get_customer" {
		t.Fatalf("tools %s and %s", getBalance.FQN, getCustomer.FQN)
	}
}

func TestGetBalanceReturnsEveryAccountOfTheCustomer(t *testing.T) {
	h := serve(t)
	var out accountsv1.GetBalanceResponse
	if err := h.Call(garmtooltest.Context(t), getBalance, &accountsv1.GetBalanceRequest{CustomerId: proto.String(bank.DemoCustomer)}, &out,
		garmtooltest.WithTenant(bank.Tenant)); err != nil {
		t.Fatal(err)
	}
	want := &accountsv1.GetBalanceResponse{
		CustomerId: proto.String(bank.DemoCustomer),
		AsOf:       out.GetAsOf(),
		Accounts: []*accountsv1.AccountBalance{
			{
				AccountId: proto.String(bank.DemoAccount), Name: proto.String("Everyday current account"),
				Type: accountsv1.AccountType_ACCOUNT_TYPE_CURRENT.Enum(), Iban: proto.String("GB57ACMB40010012345678"),
				CurrencyCode: proto.String("GBP"), BalanceMinorUnits: proto.Int64(2_450_075), AvailableMinorUnits: proto.Int64(2_450_075),
			},
			{
				AccountId: proto.String("A-10002"), Name: proto.String("Rainy-day savings"),
				Type: accountsv1.AccountType_ACCOUNT_TYPE_SAVINGS.Enum(), Iban: proto.String("GB96ACMB40010087654321"),
				CurrencyCode: proto.String("GBP"), BalanceMinorUnits: proto.Int64(1_200_000), AvailableMinorUnits: proto.Int64(1_200_000),
			},
		},
	}
	if !proto.Equal(&out, want) {
		t.Fatalf("answered %v\nwant %v", &out, want)
	}
	if !out.GetAsOf().AsTime().Equal(now) {
		t.Errorf("as_of %v, want the store's clock %v", out.GetAsOf().AsTime(), now)
	}
}

// A tool returns its full answer: redaction is garmd's, per caller.
func TestGetCustomerReturnsTheWholeRecordUnredacted(t *testing.T) {
	h := serve(t)
	var out accountsv1.GetCustomerResponse
	if err := h.Call(garmtooltest.Context(t), getCustomer, &accountsv1.GetCustomerRequest{CustomerId: proto.String(bank.DemoCustomer)}, &out); err != nil {
		t.Fatal(err)
	}
	if out.GetCustomerId() != bank.DemoCustomer || out.GetDisplayName() != "Priya Raman" ||
		out.GetEmail() != "priya.raman@example.com" || out.GetPhone() != "+447700900123" || out.GetNationalId() != "QQ123456C" {
		t.Fatalf("record %v", &out)
	}
	if got := out.GetDateOfBirth().AsTime(); !got.Equal(time.Date(1988, time.April, 12, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("date of birth %v", got)
	}
	if got := out.GetCustomerSince().AsTime(); !got.Equal(time.Date(2015, time.March, 2, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("customer since %v", got)
	}
}

func TestAnUnknownCustomerIsRefusedWith404ByBothTools(t *testing.T) {
	h := serve(t)
	garmtooltest.WantRefusal(t, h.Call(garmtooltest.Context(t), getBalance, &accountsv1.GetBalanceRequest{CustomerId: proto.String("C-9999")}, new(accountsv1.GetBalanceResponse)), "404")
	garmtooltest.WantRefusal(t, h.Call(garmtooltest.Context(t), getCustomer, &accountsv1.GetCustomerRequest{CustomerId: proto.String("C-9999")}, new(accountsv1.GetCustomerResponse)), "404")
}

// garmd validates first, but anything on the bus can reach the tool.
func TestARequestBreakingTheContractIsRefusedWith400(t *testing.T) {
	h := serve(t)
	for name, id := range map[string]*string{"missing": nil, "malformed": proto.String("1001"), "too long": proto.String("C-10010")} {
		t.Run(name, func(t *testing.T) {
			garmtooltest.WantRefusal(t, h.Call(garmtooltest.Context(t), getBalance, &accountsv1.GetBalanceRequest{CustomerId: id}, new(accountsv1.GetBalanceResponse)), "400")
			garmtooltest.WantRefusal(t, h.Call(garmtooltest.Context(t), getCustomer, &accountsv1.GetCustomerRequest{CustomerId: id}, new(accountsv1.GetCustomerResponse)), "400")
		})
	}
}
