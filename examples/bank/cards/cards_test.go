package cards_test

import (
	"sync"
	"testing"

	"github.com/garm-dev/garm/examples/bank"
	cardsv1 "github.com/garm-dev/garm/examples/bank/gen/cards/v1"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"google.golang.org/protobuf/proto"
)

func TestTheServiceServesItsThreeTools(t *testing.T) {
	for i, fqn := range []string{"cards.v1.list_cards", "cards.v1.freeze_card", "cards.v1.unfreeze_card"} {
		if got := cardsv1.CardsServiceTools[i].FQN; got != fqn {
			t.Errorf("tool %d is %s, want %s", i, got, fqn)
		}
	}
}

// The card number goes back whole: garmd shows most callers its BIN and
// last four.
func TestListCardsReturnsEveryCardOfTheCustomerWithItsWholeNumber(t *testing.T) {
	h := serve(t)
	var out cardsv1.ListCardsResponse
	if err := h.Call(garmtooltest.Context(t), listCards, &cardsv1.ListCardsRequest{CustomerId: proto.String(bank.DemoCustomer)}, &out); err != nil {
		t.Fatal(err)
	}
	want := &cardsv1.ListCardsResponse{
		CustomerId: proto.String(bank.DemoCustomer),
		Cards: []*cardsv1.Card{
			{
				CardId: proto.String(bank.DemoCard), CustomerId: proto.String(bank.DemoCustomer), AccountId: proto.String(bank.DemoAccount),
				CardNumber: proto.String("4111111111111111"), Brand: cardsv1.CardBrand_CARD_BRAND_VISA.Enum(),
				Funding: cardsv1.CardFunding_CARD_FUNDING_DEBIT.Enum(), CardholderName: proto.String("MS PRIYA RAMAN"),
				ExpiryMonth: proto.Uint32(9), ExpiryYear: proto.Uint32(2028), Status: cardsv1.CardStatus_CARD_STATUS_ACTIVE.Enum(),
			},
			{
				CardId: proto.String("CARD-2002"), CustomerId: proto.String(bank.DemoCustomer), AccountId: proto.String(bank.DemoAccount),
				CardNumber: proto.String("5555555555554444"), Brand: cardsv1.CardBrand_CARD_BRAND_MASTERCARD.Enum(),
				Funding: cardsv1.CardFunding_CARD_FUNDING_CREDIT.Enum(), CardholderName: proto.String("MS PRIYA RAMAN"),
				ExpiryMonth: proto.Uint32(3), ExpiryYear: proto.Uint32(2027), Status: cardsv1.CardStatus_CARD_STATUS_ACTIVE.Enum(),
			},
		},
	}
	if !proto.Equal(&out, want) {
		t.Fatalf("answered %v\nwant %v", &out, want)
	}
}

func TestListCardsRefusesAnUnknownCustomerWith404AndAMalformedIdWith400(t *testing.T) {
	h := serve(t)
	garmtooltest.WantRefusal(t, h.Call(garmtooltest.Context(t), listCards, &cardsv1.ListCardsRequest{CustomerId: proto.String("C-9999")}, new(cardsv1.ListCardsResponse)), "404")
	garmtooltest.WantRefusal(t, h.Call(garmtooltest.Context(t), listCards, &cardsv1.ListCardsRequest{CustomerId: proto.String("CARD-2001")}, new(cardsv1.ListCardsResponse)), "400")
}

func TestAFrozenCardIsActiveAgainOnceUnfrozen(t *testing.T) {
	h := serve(t)
	frozen, err := freeze(t, h, bank.DemoCard, cardsv1.FreezeReason_FREEZE_REASON_LOST)
	if err != nil {
		t.Fatal(err)
	}
	if frozen.GetStatus() != cardsv1.CardStatus_CARD_STATUS_FROZEN || frozen.GetFreezeReason() != cardsv1.FreezeReason_FREEZE_REASON_LOST ||
		!frozen.GetFrozenAt().AsTime().Equal(now) {
		t.Fatalf("after freeze_card: %v", frozen)
	}
	active, err := unfreeze(t, h, bank.DemoCard)
	if err != nil {
		t.Fatal(err)
	}
	if active.GetStatus() != cardsv1.CardStatus_CARD_STATUS_ACTIVE || active.FrozenAt != nil || active.FreezeReason != nil {
		t.Fatalf("after unfreeze_card: %v", active)
	}
	var listed cardsv1.ListCardsResponse
	if err := h.Call(garmtooltest.Context(t), listCards, &cardsv1.ListCardsRequest{CustomerId: proto.String(bank.DemoCustomer)}, &listed); err != nil {
		t.Fatal(err)
	}
	if got := listed.GetCards()[0]; !proto.Equal(got, active) {
		t.Fatalf("list_cards shows %v, want %v", got, active)
	}
}

// The contract's guidance tells callers what 409 means for each tool.
func TestFreezingAFrozenCardAndUnfreezingAnActiveOneAre409(t *testing.T) {
	h := serve(t)
	_, err := freeze(t, h, bank.DemoFrozenCard, cardsv1.FreezeReason_FREEZE_REASON_CUSTOMER_REQUEST)
	garmtooltest.WantRefusal(t, err, "409")
	_, err = unfreeze(t, h, bank.DemoCard)
	garmtooltest.WantRefusal(t, err, "409")
	if _, err := unfreeze(t, h, bank.DemoFrozenCard); err != nil {
		t.Fatalf("unfreezing the demo's frozen card: %v", err)
	}
}

func TestAnUnknownCardIs404(t *testing.T) {
	h := serve(t)
	_, err := freeze(t, h, "CARD-9999", cardsv1.FreezeReason_FREEZE_REASON_LOST)
	garmtooltest.WantRefusal(t, err, "404")
	_, err = unfreeze(t, h, "CARD-9999")
	garmtooltest.WantRefusal(t, err, "404")
}

func TestACardFrozenAsStolenIsNeverUnfrozen(t *testing.T) {
	h := serve(t)
	if _, err := freeze(t, h, bank.DemoCard, cardsv1.FreezeReason_FREEZE_REASON_STOLEN); err != nil {
		t.Fatal(err)
	}
	_, err := unfreeze(t, h, bank.DemoCard)
	garmtooltest.WantRefusal(t, err, "422")
}

func TestAFreezeWithoutAReasonOrWithAMalformedCardIdIs400(t *testing.T) {
	h := serve(t)
	for name, req := range map[string]*cardsv1.FreezeCardRequest{
		"no reason":          {CardId: proto.String(bank.DemoCard)},
		"unspecified reason": {CardId: proto.String(bank.DemoCard), Reason: cardsv1.FreezeReason_FREEZE_REASON_UNSPECIFIED.Enum()},
		"undefined reason":   {CardId: proto.String(bank.DemoCard), Reason: cardsv1.FreezeReason(99).Enum()},
		"malformed card id":  {CardId: proto.String("2001"), Reason: cardsv1.FreezeReason_FREEZE_REASON_LOST.Enum()},
	} {
		t.Run(name, func(t *testing.T) {
			garmtooltest.WantRefusal(t, h.Call(garmtooltest.Context(t), freezeCard, req, new(cardsv1.FreezeCardResponse)), "400")
		})
	}
	garmtooltest.WantRefusal(t, h.Call(garmtooltest.Context(t), unfreezeCard, &cardsv1.UnfreezeCardRequest{}, new(cardsv1.UnfreezeCardResponse)), "400")
}

// Many callers freezing one card at once: exactly one freezes it.
func TestConcurrentFreezesOfOneCardFreezeItOnce(t *testing.T) {
	h := serve(t)
	const callers = 16
	var wg sync.WaitGroup
	errs := make([]error, callers)
	for i := range callers {
		wg.Go(func() {
			_, errs[i] = freeze(t, h, bank.DemoCard, cardsv1.FreezeReason_FREEZE_REASON_SUSPECTED_FRAUD)
		})
	}
	wg.Wait()
	froze := 0
	for _, err := range errs {
		if err == nil {
			froze++
			continue
		}
		garmtooltest.WantRefusal(t, err, "409")
	}
	if froze != 1 {
		t.Fatalf("%d callers froze the card, want exactly 1", froze)
	}
}
