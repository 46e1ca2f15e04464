package accounts

import (
	"context"

	"buf.build/go/protovalidate"
	accountsv1 "github.com/garm-dev/garm/examples/bank/gen/accounts/v1"
	"github.com/garm-dev/garm/examples/bank/store"
	"github.com/garm-dev/garm/runtime/toolbind"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Service serves accounts.v1.AccountsService from a store.
type Service struct {
	bank *store.Bank
}

var _ accountsv1.AccountsServiceHandler = (*Service)(nil)

// New returns the service, reading b.
func New(b *store.Bank) *Service { return &Service{bank: b} }

// GetBalance returns every account of the customer with its settled and
// available balance.
func (s *Service) GetBalance(_ context.Context, req *accountsv1.GetBalanceRequest) (*accountsv1.GetBalanceResponse, error) {
	if err := valid(req); err != nil {
		return nil, err
	}
	balances, asOf, err := s.bank.Balances(req.GetCustomerId())
	if err != nil {
		return nil, err
	}
	out := &accountsv1.GetBalanceResponse{CustomerId: proto.String(req.GetCustomerId()), AsOf: timestamppb.New(asOf)}
	for _, b := range balances {
		out.Accounts = append(out.Accounts, &accountsv1.AccountBalance{
			AccountId:           proto.String(b.ID),
			Name:                proto.String(b.Name),
			Type:                b.Type.Enum(),
			Iban:                proto.String(b.IBAN),
			CurrencyCode:        proto.String(b.Currency),
			BalanceMinorUnits:   proto.Int64(b.Settled),
			AvailableMinorUnits: proto.Int64(b.Available),
		})
	}
	return out, nil
}

// GetCustomer returns the customer's whole record.
func (s *Service) GetCustomer(_ context.Context, req *accountsv1.GetCustomerRequest) (*accountsv1.GetCustomerResponse, error) {
	if err := valid(req); err != nil {
		return nil, err
	}
	c, err := s.bank.Customer(req.GetCustomerId())
	if err != nil {
		return nil, err
	}
	return &accountsv1.GetCustomerResponse{
		CustomerId:    proto.String(c.ID),
		DisplayName:   proto.String(c.DisplayName),
		Email:         proto.String(c.Email),
		Phone:         proto.String(c.Phone),
		DateOfBirth:   timestamppb.New(c.DateOfBirth),
		NationalId:    proto.String(c.NationalID),
		CustomerSince: timestamppb.New(c.CustomerSince),
	}, nil
}

// valid refuses, with 400, a request that breaks the contract's
// protovalidate rules.
func valid(req proto.Message) error {
	if err := protovalidate.Validate(req); err != nil {
		return toolbind.BadRequest(err.Error())
	}
	return nil
}
