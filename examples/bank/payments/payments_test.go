package payments_test

import (
	"testing"

	"github.com/garm-dev/garm/examples/bank"
	paymentsv1 "github.com/garm-dev/garm/examples/bank/gen/payments/v1"
	"github.com/garm-dev/garm/examples/bank/payments"
	"github.com/garm-dev/garm/examples/bank/store"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

func TestTheServiceServesBothTools(t *testing.T) {
	if initiatePayment.FQN != "payments.v1.initiate_payment" || getPaymentStatus.FQN != "payments.v1.get_payment_status" {
		t.Fatalf("tools %s and %s", initiatePayment.FQN, getPaymentStatus.FQN)
	}
}

func TestAPaymentIsPendingThenSent(t *testing.T) {
	f := serve(t)
	before := f.available(t)
	made, err := f.pay(t, demoPayment())
	if err != nil {
		t.Fatal(err)
	}
	want := &paymentsv1.Payment{
		PaymentId:        proto.String("PAY-000001"),
		Status:           paymentsv1.PaymentStatus_PAYMENT_STATUS_PENDING.Enum(),
		FromAccountId:    proto.String(bank.DemoAccount),
		AmountMinorUnits: proto.Int64(bank.DemoAmountMinorUnits),
		CurrencyCode:     proto.String(bank.DemoCurrency),
		BeneficiaryName:  proto.String(bank.DemoBeneficiaryName),
		BeneficiaryIban:  proto.String(bank.DemoBeneficiaryIBAN),
		Reference:        proto.String(bank.DemoReference),
		CreatedAt:        timestamppb.New(start),
	}
	if !proto.Equal(made, want) {
		t.Fatalf("initiate_payment answered %v\nwant %v", made, want)
	}
	if got := f.available(t); got != before-bank.DemoAmountMinorUnits {
		t.Errorf("available %d after paying %d from %d", got, int64(bank.DemoAmountMinorUnits), before)
	}
	if pending, err := f.status(t, "PAY-000001"); err != nil || !proto.Equal(pending, want) {
		t.Fatalf("get_payment_status while pending: %v, %v", pending, err)
	}

	f.clock.Advance(store.DefaultSettleDelay)
	sent, err := f.status(t, "PAY-000001")
	if err != nil {
		t.Fatal(err)
	}
	want.Status = paymentsv1.PaymentStatus_PAYMENT_STATUS_SENT.Enum()
	want.SentAt = timestamppb.New(start.Add(store.DefaultSettleDelay))
	if !proto.Equal(sent, want) {
		t.Fatalf("get_payment_status once sent: %v\nwant %v", sent, want)
	}
}

func TestAnUnknownPaymentIs404AndAMalformedIdIs400(t *testing.T) {
	f := serve(t)
	_, err := f.status(t, "PAY-000001")
	garmtooltest.WantRefusal(t, err, "404")
	_, err = f.status(t, "PAY-1")
	garmtooltest.WantRefusal(t, err, "400")
}

// What the bank itself refuses, after the contract's rules pass.
func TestThePaymentsTheBankRefuses(t *testing.T) {
	f := serve(t)
	tests := []struct {
		name  string
		shape func(*paymentsv1.InitiatePaymentRequest)
		code  string
	}{
		{"an unknown account", func(r *paymentsv1.InitiatePaymentRequest) { r.FromAccountId = proto.String("A-99999") }, "404"},
		{"a currency the account does not hold", func(r *paymentsv1.InitiatePaymentRequest) { r.CurrencyCode = proto.String("EUR") }, "422"},
		{"more than is available", func(r *paymentsv1.InitiatePaymentRequest) { r.AmountMinorUnits = proto.Int64(2_450_076) }, "422"},
		{"wrong IBAN check digits", func(r *paymentsv1.InitiatePaymentRequest) { r.BeneficiaryIban = proto.String("GB28NWBK60161331926819") }, "422"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := demoPayment()
			tt.shape(req)
			_, err := f.pay(t, req)
			garmtooltest.WantRefusal(t, err, tt.code)
		})
	}
	if got := f.available(t); got != 2_450_075 {
		t.Fatalf("refused payments changed the available balance to %d", got)
	}
}

// The contract's protovalidate rules, the GBP limit's CEL rule among them.
func TestAPaymentBreakingTheContractIs400(t *testing.T) {
	f := serve(t)
	tests := []struct {
		name  string
		shape func(*paymentsv1.InitiatePaymentRequest)
	}{
		{"no amount", func(r *paymentsv1.InitiatePaymentRequest) { r.AmountMinorUnits = nil }},
		{"a zero amount", func(r *paymentsv1.InitiatePaymentRequest) { r.AmountMinorUnits = proto.Int64(0) }},
		{"a negative amount", func(r *paymentsv1.InitiatePaymentRequest) { r.AmountMinorUnits = proto.Int64(-1) }},
		{"a currency the bank does not pay in", func(r *paymentsv1.InitiatePaymentRequest) { r.CurrencyCode = proto.String("USD") }},
		{"a malformed IBAN", func(r *paymentsv1.InitiatePaymentRequest) {
			r.BeneficiaryIban = proto.String("GB29 NWBK 6016 1331 9268 19")
		}},
		{"no beneficiary name", func(r *paymentsv1.InitiatePaymentRequest) { r.BeneficiaryName = proto.String("") }},
		{"a malformed account", func(r *paymentsv1.InitiatePaymentRequest) { r.FromAccountId = proto.String("10001") }},
		{"a reference over 18 characters", func(r *paymentsv1.InitiatePaymentRequest) { r.Reference = proto.String("INVOICE-2291-REMAINDER") }},
		{"an empty idempotency key", func(r *paymentsv1.InitiatePaymentRequest) { r.IdempotencyKey = proto.String("") }},
		{"a GBP payment over 1,000,000.00", func(r *paymentsv1.InitiatePaymentRequest) { r.AmountMinorUnits = proto.Int64(100_000_001) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := demoPayment()
			tt.shape(req)
			_, err := f.pay(t, req)
			garmtooltest.WantRefusal(t, err, "400")
		})
	}
}

// The GBP limit binds GBP alone: a large EUR payment passes the contract
// and is refused by the bank only for want of funds.
func TestTheGBPLimitDoesNotBindOtherCurrencies(t *testing.T) {
	f := serve(t)
	req := demoPayment()
	req.FromAccountId, req.CurrencyCode, req.AmountMinorUnits = proto.String("A-10004"), proto.String("EUR"), proto.Int64(100_000_001)
	_, err := f.pay(t, req)
	garmtooltest.WantRefusal(t, err, "422")
	req.AmountMinorUnits = proto.Int64(100_000_000)
	req.CurrencyCode = proto.String("GBP")
	req.FromAccountId = proto.String(bank.DemoAccount)
	_, err = f.pay(t, req)
	garmtooltest.WantRefusal(t, err, "422") // at the limit, refused for want of funds, not by the rule
}

func TestValidIBAN(t *testing.T) {
	tests := []struct {
		iban string
		want bool
	}{
		{bank.DemoBeneficiaryIBAN, true},
		{"GB82WEST12345698765432", true},
		{"DE89370400440532013000", true},
		{"GB57ACMB40010012345678", true},
		{"GB28NWBK60161331926819", false}, // check digits off by one
		{"GB29NWBK60161331926818", false}, // last digit changed
		{"gb29NWBK60161331926819", false},
		{"GB29NWBK6016133192681", false}, // a digit short: checksum fails
		{"GB29 NWBK 6016 1331 9268 19", false},
		{"GB2", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := payments.ValidIBAN(tt.iban); got != tt.want {
			t.Errorf("ValidIBAN(%q) = %v, want %v", tt.iban, got, tt.want)
		}
	}
}
