package cards_test

import (
	"testing"
	"time"

	"github.com/garm-dev/garm/examples/bank"
	"github.com/garm-dev/garm/examples/bank/cards"
	cardsv1 "github.com/garm-dev/garm/examples/bank/gen/cards/v1"
	"github.com/garm-dev/garm/examples/bank/store"
	"github.com/garm-dev/garm/runtime/garmtool"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"google.golang.org/protobuf/proto"
)

var (
	listCards    = cardsv1.CardsServiceTools[0]
	freezeCard   = cardsv1.CardsServiceTools[1]
	unfreezeCard = cardsv1.CardsServiceTools[2]
	now          = time.Date(2025, time.November, 28, 9, 30, 0, 0, time.UTC)
)

// serve runs the cards service over a fresh demo store on a harness.
func serve(t *testing.T) *garmtooltest.Harness {
	t.Helper()
	b, err := bank.NewStore(store.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	svc := garmtool.New("bank-cards", bank.Version, garmtool.WithConcurrency(8))
	if err := cardsv1.ServeCardsService(svc, cards.New(b)); err != nil {
		t.Fatal(err)
	}
	return garmtooltest.Start(t, svc)
}

func freeze(t *testing.T, h *garmtooltest.Harness, id string, reason cardsv1.FreezeReason) (*cardsv1.Card, error) {
	t.Helper()
	var out cardsv1.FreezeCardResponse
	err := h.Call(garmtooltest.Context(t), freezeCard, &cardsv1.FreezeCardRequest{CardId: proto.String(id), Reason: reason.Enum()}, &out)
	return out.GetCard(), err
}

func unfreeze(t *testing.T, h *garmtooltest.Harness, id string) (*cardsv1.Card, error) {
	t.Helper()
	var out cardsv1.UnfreezeCardResponse
	err := h.Call(garmtooltest.Context(t), unfreezeCard, &cardsv1.UnfreezeCardRequest{CardId: proto.String(id)}, &out)
	return out.GetCard(), err
}
