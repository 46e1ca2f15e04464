package payments

import (
	"context"

	"buf.build/go/protovalidate"
	paymentsv1 "github.com/garm-dev/garm/examples/bank/gen/payments/v1"
	"github.com/garm-dev/garm/examples/bank/store"
	"github.com/garm-dev/garm/runtime/toolbind"
	"github.com/garm-dev/garm/runtime/wire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Service serves payments.v1.PaymentsService from a store.
type Service struct {
	bank *store.Bank
}

var _ paymentsv1.PaymentsServiceHandler = (*Service)(nil)

// New returns the service, paying from b's accounts.
func New(b *store.Bank) *Service { return &Service{bank: b} }

// InitiatePayment makes the payment, or returns the one an earlier call with
// the same idempotency key made.
func (s *Service) InitiatePayment(ctx context.Context, req *paymentsv1.InitiatePaymentRequest) (*paymentsv1.InitiatePaymentResponse, error) {
	if err := valid(req); err != nil {
		return nil, err
	}
	if !ValidIBAN(req.GetBeneficiaryIban()) {
		return nil, toolbind.UnprocessableEntity("the beneficiary IBAN's check digits are wrong")
	}
	key := req.GetIdempotencyKey()
	if key == "" {
		key = wire.InvocationFrom(ctx).GetIdempotencyKey()
	}
	p, err := s.bank.Pay(store.Order{
		FromAccountID:   req.GetFromAccountId(),
		Amount:          req.GetAmountMinorUnits(),
		Currency:        req.GetCurrencyCode(),
		BeneficiaryName: req.GetBeneficiaryName(),
		BeneficiaryIBAN: req.GetBeneficiaryIban(),
		Reference:       req.GetReference(),
	}, key)
	if err != nil {
		return nil, err
	}
	return &paymentsv1.InitiatePaymentResponse{Payment: payment(p)}, nil
}

// GetPaymentStatus returns the payment as it is now.
func (s *Service) GetPaymentStatus(_ context.Context, req *paymentsv1.GetPaymentStatusRequest) (*paymentsv1.GetPaymentStatusResponse, error) {
	if err := valid(req); err != nil {
		return nil, err
	}
	p, err := s.bank.Payment(req.GetPaymentId())
	if err != nil {
		return nil, err
	}
	return &paymentsv1.GetPaymentStatusResponse{Payment: payment(p)}, nil
}

// payment is the contract's form of a payment; sent_at only once it is
// sent, reference only when there is one.
func payment(p store.Payment) *paymentsv1.Payment {
	out := &paymentsv1.Payment{
		PaymentId:        proto.String(p.ID),
		Status:           p.Status.Enum(),
		FromAccountId:    proto.String(p.FromAccountID),
		AmountMinorUnits: proto.Int64(p.Amount),
		CurrencyCode:     proto.String(p.Currency),
		BeneficiaryName:  proto.String(p.BeneficiaryName),
		BeneficiaryIban:  proto.String(p.BeneficiaryIBAN),
		CreatedAt:        timestamppb.New(p.CreatedAt),
	}
	if p.Reference != "" {
		out.Reference = proto.String(p.Reference)
	}
	if !p.SentAt.IsZero() {
		out.SentAt = timestamppb.New(p.SentAt)
	}
	return out
}

// ValidIBAN reports whether iban is an IBAN written without spaces whose
// check digits are right (ISO 13616): two capital letters, two digits, then
// 11 to 30 capital letters and digits, which moved four characters to the
// end and read with A as 10 to Z as 35 are 1 modulo 97. It checks the
// digits only, not that the account exists.
func ValidIBAN(iban string) bool {
	if len(iban) < 15 || len(iban) > 34 || !isUpper(iban[0]) || !isUpper(iban[1]) || !isDigit(iban[2]) || !isDigit(iban[3]) {
		return false
	}
	rem := 0
	for _, c := range []byte(iban[4:] + iban[:4]) {
		switch {
		case isDigit(c):
			rem = (rem*10 + int(c-'0')) % 97
		case isUpper(c):
			rem = (rem*100 + int(c-'A'+10)) % 97
		default:
			return false
		}
	}
	return rem == 1
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }

// valid refuses, with 400, a request that breaks the contract's
// protovalidate rules, its CEL rules included.
func valid(req proto.Message) error {
	if err := protovalidate.Validate(req); err != nil {
		return toolbind.BadRequest(err.Error())
	}
	return nil
}
