package bank_test

import (
	"slices"
	"testing"

	"github.com/garm-dev/garm/examples/bank"
	cardsv1 "github.com/garm-dev/garm/examples/bank/gen/cards/v1"
	paymentsv1 "github.com/garm-dev/garm/examples/bank/gen/payments/v1"
	"github.com/garm-dev/garm/examples/bank/payments"
	"github.com/garm-dev/garm/examples/bank/store"
	"github.com/garm-dev/garm/runtime/wire"
	"google.golang.org/protobuf/proto"
)

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

// The Demo constants name data the demo store holds, in the state the tour
// needs it.
func TestTheDemoConstantsNameTheDemoData(t *testing.T) {
	b, err := bank.NewStore()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Customer(bank.DemoCustomer); err != nil {
		t.Fatal(err)
	}
	balances, _, err := b.Balances(bank.DemoCustomer)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(balances, func(a store.Balance) bool { return a.ID == bank.DemoAccount })
	if i < 0 {
		t.Fatalf("%s holds no %s", bank.DemoCustomer, bank.DemoAccount)
	}
	if a := balances[i]; a.Currency != bank.DemoCurrency || a.Available < bank.DemoAmountMinorUnits {
		t.Errorf("%s holds %d %s; the demo payment is %d %s", a.ID, a.Available, a.Currency, int64(bank.DemoAmountMinorUnits), bank.DemoCurrency)
	}
	cards, err := b.Cards(bank.DemoCustomer)
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(cards, func(c store.Card) bool { return c.ID == bank.DemoCard }); i < 0 || cards[i].Status != cardsv1.CardStatus_CARD_STATUS_ACTIVE {
		t.Errorf("%s is not an active card of %s: %v", bank.DemoCard, bank.DemoCustomer, cards)
	}
	if _, err := b.UnfreezeCard(bank.DemoFrozenCard); err != nil {
		t.Errorf("%s cannot be unfrozen: %v", bank.DemoFrozenCard, err)
	}
	if !payments.ValidIBAN(bank.DemoBeneficiaryIBAN) || len(bank.DemoReference) > 18 {
		t.Error("the demo payment would be refused")
	}
}

// Over design 7.9's three reference fields, the demo payment's material is the
// specification's reference digest, so a reader can check the digest code
// against the specification with the demo's own values. (The payment's
// material also binds the paying account: see Example_grantMaterial.)
func TestTheDemoPaymentsMaterialDigestIsTheSpecificationsReference(t *testing.T) {
	digest, err := wire.RequestMaterialDigest(demoPayment().ProtoReflect(), []string{"amount_minor_units", "currency_code", "beneficiary_iban"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "sha256:050767261c6a70af99c68e72344389981e728a40661ace42936a6d3d00ac9f71"; digest != want {
		t.Fatalf("digest %s, want %s", digest, want)
	}
}
