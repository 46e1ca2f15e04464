package cards

import (
	"context"

	"buf.build/go/protovalidate"
	cardsv1 "github.com/garm-dev/garm/examples/bank/gen/cards/v1"
	"github.com/garm-dev/garm/examples/bank/store"
	"github.com/garm-dev/garm/runtime/toolbind"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Service serves cards.v1.CardsService from a store.
type Service struct {
	bank *store.Bank
}

var _ cardsv1.CardsServiceHandler = (*Service)(nil)

// New returns the service, reading and changing b.
func New(b *store.Bank) *Service { return &Service{bank: b} }

// ListCards returns every card of the customer.
func (s *Service) ListCards(_ context.Context, req *cardsv1.ListCardsRequest) (*cardsv1.ListCardsResponse, error) {
	if err := valid(req); err != nil {
		return nil, err
	}
	cards, err := s.bank.Cards(req.GetCustomerId())
	if err != nil {
		return nil, err
	}
	out := &cardsv1.ListCardsResponse{CustomerId: proto.String(req.GetCustomerId())}
	for _, c := range cards {
		out.Cards = append(out.Cards, card(c))
	}
	return out, nil
}

// FreezeCard freezes the card and returns it frozen.
func (s *Service) FreezeCard(_ context.Context, req *cardsv1.FreezeCardRequest) (*cardsv1.FreezeCardResponse, error) {
	if err := valid(req); err != nil {
		return nil, err
	}
	c, err := s.bank.FreezeCard(req.GetCardId(), req.GetReason())
	if err != nil {
		return nil, err
	}
	return &cardsv1.FreezeCardResponse{Card: card(c)}, nil
}

// UnfreezeCard makes the frozen card active again and returns it.
func (s *Service) UnfreezeCard(_ context.Context, req *cardsv1.UnfreezeCardRequest) (*cardsv1.UnfreezeCardResponse, error) {
	if err := valid(req); err != nil {
		return nil, err
	}
	c, err := s.bank.UnfreezeCard(req.GetCardId())
	if err != nil {
		return nil, err
	}
	return &cardsv1.UnfreezeCardResponse{Card: card(c)}, nil
}

// card is the contract's form of a card; the freeze fields only while it is
// frozen.
func card(c store.Card) *cardsv1.Card {
	out := &cardsv1.Card{
		CardId:         proto.String(c.ID),
		CustomerId:     proto.String(c.CustomerID),
		AccountId:      proto.String(c.AccountID),
		CardNumber:     proto.String(c.Number),
		Brand:          c.Brand.Enum(),
		Funding:        c.Funding.Enum(),
		CardholderName: proto.String(c.CardholderName),
		ExpiryMonth:    proto.Uint32(c.ExpiryMonth),
		ExpiryYear:     proto.Uint32(c.ExpiryYear),
		Status:         c.Status.Enum(),
	}
	if c.Status == cardsv1.CardStatus_CARD_STATUS_FROZEN {
		out.FrozenAt = timestamppb.New(c.FrozenAt)
		out.FreezeReason = c.FreezeReason.Enum()
	}
	return out
}

// valid refuses, with 400, a request that breaks the contract's
// protovalidate rules.
func valid(req proto.Message) error {
	if err := protovalidate.Validate(req); err != nil {
		return toolbind.BadRequest(err.Error())
	}
	return nil
}
