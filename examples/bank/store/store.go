package store

import (
	"fmt"
	"sync"
	"time"

	accountsv1 "github.com/garm-dev/garm/examples/bank/gen/accounts/v1"
	cardsv1 "github.com/garm-dev/garm/examples/bank/gen/cards/v1"
	"github.com/garm-dev/garm/runtime/toolbind"
)

// DefaultSettleDelay is how long a payment stays pending unless
// WithSettleDelay says otherwise.
const DefaultSettleDelay = 5 * time.Second

// Customer is one customer's record.
type Customer struct {
	ID            string
	DisplayName   string
	Email         string
	Phone         string
	DateOfBirth   time.Time
	NationalID    string
	CustomerSince time.Time
}

// Account is one account as it was opened, before any payment the store
// made from it.
type Account struct {
	ID         string
	CustomerID string
	Name       string
	Type       accountsv1.AccountType
	IBAN       string
	// Currency is the ISO 4217 code every amount of the account is in.
	Currency string
	// OpeningBalance is in minor units of Currency.
	OpeningBalance int64
}

// Balance is an account with what it holds now, in minor units of its
// currency.
type Balance struct {
	Account
	// Settled is the opening balance less every sent payment.
	Settled int64
	// Available is the opening balance less every payment, pending or sent.
	Available int64
}

// Card is one payment card.
type Card struct {
	ID             string
	CustomerID     string
	AccountID      string
	Number         string
	Brand          cardsv1.CardBrand
	Funding        cardsv1.CardFunding
	CardholderName string
	ExpiryMonth    uint32
	ExpiryYear     uint32
	Status         cardsv1.CardStatus
	// FrozenAt and FreezeReason are zero while the card is active.
	FrozenAt     time.Time
	FreezeReason cardsv1.FreezeReason
}

// Seed is what a new store starts with.
type Seed struct {
	Customers []Customer
	Accounts  []Account
	Cards     []Card
}

// Bank is the store. Its zero value is not usable; call New.
type Bank struct {
	now         func() time.Time
	settleAfter time.Duration

	mu         sync.Mutex
	customers  map[string]Customer
	accounts   map[string]Account
	cards      map[string]*Card
	ofCustomer map[string]holdings
	payments   map[string]*payment
	ofAccount  map[string][]*payment // in the order they were made
	byKey      map[string]*payment
	made       int // payments made so far; the next id is made+1
}

// holdings are a customer's accounts and cards, in the order they were
// opened and issued.
type holdings struct{ accounts, cards []string }

// An Option configures a store.
type Option func(*Bank)

// WithClock sets the clock payments, freezes and balances are stamped with
// (default time.Now).
func WithClock(now func() time.Time) Option {
	return func(b *Bank) {
		if now != nil {
			b.now = now
		}
	}
}

// WithSettleDelay sets how long a payment stays pending before it is sent
// (default DefaultSettleDelay; zero sends every payment at once).
func WithSettleDelay(d time.Duration) Option {
	return func(b *Bank) {
		if d >= 0 {
			b.settleAfter = d
		}
	}
}

// New returns a store holding the seed, refusing one that contradicts
// itself: an id used twice, an account or card of an unknown customer, a
// card on another customer's account, or an account without a currency.
func New(seed Seed, opts ...Option) (*Bank, error) {
	b := &Bank{
		now:         time.Now,
		settleAfter: DefaultSettleDelay,
		customers:   map[string]Customer{},
		accounts:    map[string]Account{},
		cards:       map[string]*Card{},
		ofCustomer:  map[string]holdings{},
		payments:    map[string]*payment{},
		ofAccount:   map[string][]*payment{},
		byKey:       map[string]*payment{},
	}
	for _, opt := range opts {
		opt(b)
	}
	for _, c := range seed.Customers {
		if _, dup := b.customers[c.ID]; dup || c.ID == "" {
			return nil, fmt.Errorf("store: customer id %q is empty or used twice", c.ID)
		}
		b.customers[c.ID] = c
	}
	for _, a := range seed.Accounts {
		if _, dup := b.accounts[a.ID]; dup || a.ID == "" {
			return nil, fmt.Errorf("store: account id %q is empty or used twice", a.ID)
		}
		if _, ok := b.customers[a.CustomerID]; !ok {
			return nil, fmt.Errorf("store: account %s belongs to unknown customer %q", a.ID, a.CustomerID)
		}
		if a.Currency == "" {
			return nil, fmt.Errorf("store: account %s has no currency", a.ID)
		}
		b.accounts[a.ID] = a
		h := b.ofCustomer[a.CustomerID]
		h.accounts = append(h.accounts, a.ID)
		b.ofCustomer[a.CustomerID] = h
	}
	for _, c := range seed.Cards {
		if _, dup := b.cards[c.ID]; dup || c.ID == "" {
			return nil, fmt.Errorf("store: card id %q is empty or used twice", c.ID)
		}
		if a, ok := b.accounts[c.AccountID]; !ok || a.CustomerID != c.CustomerID {
			return nil, fmt.Errorf("store: card %s is on account %q, which is not customer %q's", c.ID, c.AccountID, c.CustomerID)
		}
		b.cards[c.ID] = &c
		h := b.ofCustomer[c.CustomerID]
		h.cards = append(h.cards, c.ID)
		b.ofCustomer[c.CustomerID] = h
	}
	return b, nil
}

func noCustomer(id string) error { return toolbind.NotFound("no customer has id " + id) }

// Customer returns the customer with id, or a 404 refusal.
func (b *Bank) Customer(id string) (Customer, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c, ok := b.customers[id]
	if !ok {
		return Customer{}, noCustomer(id)
	}
	return c, nil
}

// Balances returns every account of a customer with what it holds now, and
// the time the balances are as of; an unknown customer is a 404 refusal.
func (b *Bank) Balances(customerID string) ([]Balance, time.Time, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.customers[customerID]; !ok {
		return nil, time.Time{}, noCustomer(customerID)
	}
	now := b.now()
	var out []Balance
	for _, id := range b.ofCustomer[customerID].accounts {
		out = append(out, b.balance(b.accounts[id], now))
	}
	return out, now, nil
}

// balance is what an account holds at now. The caller holds mu.
func (b *Bank) balance(a Account, now time.Time) Balance {
	bal := Balance{Account: a, Settled: a.OpeningBalance, Available: a.OpeningBalance}
	for _, p := range b.ofAccount[a.ID] {
		bal.Available -= p.order.Amount
		if b.sent(p, now) {
			bal.Settled -= p.order.Amount
		}
	}
	return bal
}

// Cards returns every card of a customer; an unknown customer is a 404
// refusal.
func (b *Bank) Cards(customerID string) ([]Card, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.customers[customerID]; !ok {
		return nil, noCustomer(customerID)
	}
	var out []Card
	for _, id := range b.ofCustomer[customerID].cards {
		out = append(out, *b.cards[id])
	}
	return out, nil
}

// FreezeCard freezes a card for reason and returns it frozen. An unknown
// card is a 404 refusal, a frozen one 409.
func (b *Bank) FreezeCard(id string, reason cardsv1.FreezeReason) (Card, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c, ok := b.cards[id]
	switch {
	case !ok:
		return Card{}, toolbind.NotFound("no card has id " + id)
	case c.Status == cardsv1.CardStatus_CARD_STATUS_FROZEN:
		return Card{}, toolbind.Conflict("card " + id + " is already frozen")
	}
	c.Status, c.FrozenAt, c.FreezeReason = cardsv1.CardStatus_CARD_STATUS_FROZEN, b.now(), reason
	return *c, nil
}

// UnfreezeCard makes a frozen card active again and returns it. An unknown
// card is a 404 refusal, an active one 409, and one frozen as stolen 422: a
// stolen card is replaced, never unfrozen.
func (b *Bank) UnfreezeCard(id string) (Card, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c, ok := b.cards[id]
	switch {
	case !ok:
		return Card{}, toolbind.NotFound("no card has id " + id)
	case c.Status != cardsv1.CardStatus_CARD_STATUS_FROZEN:
		return Card{}, toolbind.Conflict("card " + id + " is not frozen")
	case c.FreezeReason == cardsv1.FreezeReason_FREEZE_REASON_STOLEN:
		return Card{}, toolbind.UnprocessableEntity("card " + id + " was frozen as stolen; it is replaced, never unfrozen")
	}
	c.Status, c.FrozenAt, c.FreezeReason = cardsv1.CardStatus_CARD_STATUS_ACTIVE, time.Time{}, cardsv1.FreezeReason_FREEZE_REASON_UNSPECIFIED
	return *c, nil
}
