package store_test

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	cardsv1 "github.com/garm-dev/garm/examples/bank/gen/cards/v1"
	paymentsv1 "github.com/garm-dev/garm/examples/bank/gen/payments/v1"
	"github.com/garm-dev/garm/examples/bank/store"
	"github.com/garm-dev/garm/runtime/toolbind"
)

var start = time.Date(2025, time.November, 28, 9, 30, 0, 0, time.UTC)

// seed is one customer with a GBP account holding 100.00 and a card.
func seed() store.Seed {
	return store.Seed{
		Customers: []store.Customer{{ID: "C-0001", DisplayName: "Test Customer"}},
		Accounts:  []store.Account{{ID: "A-00001", CustomerID: "C-0001", Currency: "GBP", OpeningBalance: 10_000}},
		Cards:     []store.Card{{ID: "CARD-0001", CustomerID: "C-0001", AccountID: "A-00001", Status: cardsv1.CardStatus_CARD_STATUS_ACTIVE}},
	}
}

func newBank(t *testing.T, now func() time.Time) *store.Bank {
	t.Helper()
	b, err := store.New(seed(), store.WithClock(now), store.WithSettleDelay(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	var coded *toolbind.CodedError
	if !errors.As(err, &coded) || coded.Code != code {
		t.Fatalf("got %v, want a %s refusal", err, code)
	}
}

func TestNewRefusesASeedThatContradictsItself(t *testing.T) {
	tests := []struct {
		name  string
		shape func(*store.Seed)
		want  string
	}{
		{"a customer twice", func(s *store.Seed) { s.Customers = append(s.Customers, s.Customers[0]) }, `customer id "C-0001"`},
		{"an account twice", func(s *store.Seed) { s.Accounts = append(s.Accounts, s.Accounts[0]) }, `account id "A-00001"`},
		{"an account of nobody", func(s *store.Seed) { s.Accounts[0].CustomerID = "C-0002" }, `unknown customer "C-0002"`},
		{"an account without a currency", func(s *store.Seed) { s.Accounts[0].Currency = "" }, "no currency"},
		{"a card twice", func(s *store.Seed) { s.Cards = append(s.Cards, s.Cards[0]) }, `card id "CARD-0001"`},
		{"a card on no account", func(s *store.Seed) { s.Cards[0].AccountID = "A-00002" }, `account "A-00002"`},
		{"a card on another's account", func(s *store.Seed) {
			s.Customers = append(s.Customers, store.Customer{ID: "C-0002"})
			s.Cards[0].CustomerID = "C-0002"
		}, `not customer "C-0002"'s`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := seed()
			tt.shape(&s)
			if _, err := store.New(s); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New: %v, want an error naming %s", err, tt.want)
			}
		})
	}
}

// A payment leaves the available balance when it is made and the settled
// balance when it is sent.
func TestAPaymentIsTakenFromTheAvailableBalanceThenTheSettled(t *testing.T) {
	now := start
	b := newBank(t, func() time.Time { return now })
	p, err := b.Pay(store.Order{FromAccountID: "A-00001", Amount: 2_500, Currency: "GBP"}, "")
	if err != nil {
		t.Fatal(err)
	}
	balance := func() store.Balance {
		t.Helper()
		bs, _, err := b.Balances("C-0001")
		if err != nil {
			t.Fatal(err)
		}
		return bs[0]
	}
	if got := balance(); got.Available != 7_500 || got.Settled != 10_000 || p.Status != paymentsv1.PaymentStatus_PAYMENT_STATUS_PENDING {
		t.Fatalf("while pending: %+v, payment %+v", got, p)
	}
	now = start.Add(time.Minute)
	if got := balance(); got.Available != 7_500 || got.Settled != 7_500 {
		t.Fatalf("once sent: %+v", got)
	}
	if sent, err := b.Payment(p.ID); err != nil || sent.Status != paymentsv1.PaymentStatus_PAYMENT_STATUS_SENT || !sent.SentAt.Equal(now) {
		t.Fatalf("once sent: %+v, %v", sent, err)
	}
	// 7,500 are available: 7,501 is refused, 7,500 is paid.
	_, err = b.Pay(store.Order{FromAccountID: "A-00001", Amount: 7_501, Currency: "GBP"}, "")
	wantCode(t, err, "422")
	if _, err := b.Pay(store.Order{FromAccountID: "A-00001", Amount: 7_500, Currency: "GBP"}, ""); err != nil {
		t.Fatal(err)
	}
}

// The steps run in order: the last three freeze a card as stolen, then try
// to freeze and unfreeze it.
func TestWhatTheStoreRefuses(t *testing.T) {
	b := newBank(t, func() time.Time { return start })
	pay := func(o store.Order) func() error {
		return func() error { _, err := b.Pay(o, ""); return err }
	}
	freeze := func(id string) func() error {
		return func() error { _, err := b.FreezeCard(id, cardsv1.FreezeReason_FREEZE_REASON_STOLEN); return err }
	}
	unfreeze := func(id string) func() error {
		return func() error { _, err := b.UnfreezeCard(id); return err }
	}
	steps := []struct {
		name string
		call func() error
		code string
	}{
		{"an unknown customer's record", func() error { _, err := b.Customer("C-9999"); return err }, "404"},
		{"an unknown customer's balances", func() error { _, _, err := b.Balances("C-9999"); return err }, "404"},
		{"an unknown customer's cards", func() error { _, err := b.Cards("C-9999"); return err }, "404"},
		{"an unknown payment", func() error { _, err := b.Payment("PAY-000001"); return err }, "404"},
		{"paying from an unknown account", pay(store.Order{FromAccountID: "A-99999", Amount: 1, Currency: "GBP"}), "404"},
		{"paying nothing", pay(store.Order{FromAccountID: "A-00001", Amount: 0, Currency: "GBP"}), "422"},
		{"paying in another currency", pay(store.Order{FromAccountID: "A-00001", Amount: 1, Currency: "EUR"}), "422"},
		{"freezing an unknown card", freeze("CARD-9999"), "404"},
		{"unfreezing an unknown card", unfreeze("CARD-9999"), "404"},
		{"unfreezing an active card", unfreeze("CARD-0001"), "409"},
		{"freezing an active card", freeze("CARD-0001"), ""},
		{"freezing a frozen card", freeze("CARD-0001"), "409"},
		{"unfreezing a card frozen as stolen", unfreeze("CARD-0001"), "422"},
	}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			err := step.call()
			if step.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantCode(t, err, step.code)
		})
	}
}

// Concurrent payments never take more than the account has available.
func TestConcurrentPaymentsNeverOverdraw(t *testing.T) {
	b := newBank(t, func() time.Time { return start })
	var wg sync.WaitGroup
	var mu sync.Mutex
	paid := 0
	for range 50 {
		wg.Go(func() {
			if _, err := b.Pay(store.Order{FromAccountID: "A-00001", Amount: 300, Currency: "GBP"}, ""); err == nil {
				mu.Lock()
				paid++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	bs, _, err := b.Balances("C-0001")
	if err != nil {
		t.Fatal(err)
	}
	if paid != 33 || bs[0].Available != 100 {
		t.Fatalf("%d payments of 3.00 from 100.00 left %d available; want 33 and 100", paid, bs[0].Available)
	}
}

// The store hands out copies: changing what it returned changes nothing.
func TestWhatTheStoreReturnsIsACopy(t *testing.T) {
	b := newBank(t, func() time.Time { return start })
	cards, err := b.Cards("C-0001")
	if err != nil {
		t.Fatal(err)
	}
	cards[0].Status = cardsv1.CardStatus_CARD_STATUS_FROZEN
	if again, _ := b.Cards("C-0001"); again[0].Status != cardsv1.CardStatus_CARD_STATUS_ACTIVE {
		t.Fatal("changing a returned card changed the store")
	}
}
