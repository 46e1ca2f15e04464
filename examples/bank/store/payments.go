package store

import (
	"fmt"
	"time"

	paymentsv1 "github.com/garm-dev/garm/examples/bank/gen/payments/v1"
	"github.com/garm-dev/garm/runtime/toolbind"
)

// MaxPayments is the most payments one store makes: a payment's id is PAY-
// and six digits, and an in-memory bank should not grow without bound.
const MaxPayments = 999_999

// Order is a payment asked for.
type Order struct {
	FromAccountID string
	// Amount is in minor units of Currency.
	Amount          int64
	Currency        string
	BeneficiaryName string
	BeneficiaryIBAN string
	Reference       string
}

// Payment is a payment the store made.
type Payment struct {
	ID string
	Order
	Status    paymentsv1.PaymentStatus
	CreatedAt time.Time
	// SentAt is zero while the payment is pending.
	SentAt time.Time
}

// payment is the store's record of a payment; its status is worked out when
// it is read.
type payment struct {
	id        string
	order     Order
	createdAt time.Time
}

// Pay makes the payment order asks for and returns it, pending.
//
// key, when not empty, is the idempotency key of the call: a second Pay
// with the same key and the same order returns the payment the first made,
// as it is now, and pays nothing; the same key with a different order is a
// 409 refusal. A call that was refused records nothing, so its key can be
// used again. An unknown account is a 404 refusal; an amount that is not
// positive, a currency other than the account's or more than the account
// has available, 422; a store that has made MaxPayments, 429.
func (b *Bank) Pay(order Order, key string) (Payment, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	if p, ok := b.byKey[key]; ok && key != "" {
		if p.order != order {
			return Payment{}, toolbind.Conflict("the idempotency key was already used for a different payment")
		}
		return b.view(p, now), nil
	}
	a, ok := b.accounts[order.FromAccountID]
	switch {
	case !ok:
		return Payment{}, toolbind.NotFound("no account has id " + order.FromAccountID)
	case order.Amount <= 0:
		return Payment{}, toolbind.UnprocessableEntity("a payment's amount must be positive")
	case order.Currency != a.Currency:
		return Payment{}, toolbind.UnprocessableEntity(fmt.Sprintf("account %s holds %s, not %s", a.ID, a.Currency, order.Currency))
	case order.Amount > b.balance(a, now).Available:
		return Payment{}, toolbind.UnprocessableEntity("account " + a.ID + " has insufficient funds available for this payment")
	case b.made >= MaxPayments:
		return Payment{}, toolbind.TooManyRequests(fmt.Sprintf("this bank has made the most payments it holds, %d; restart it", MaxPayments))
	}
	b.made++
	p := &payment{id: fmt.Sprintf("PAY-%06d", b.made), order: order, createdAt: now}
	b.payments[p.id] = p
	b.ofAccount[a.ID] = append(b.ofAccount[a.ID], p)
	if key != "" {
		b.byKey[key] = p
	}
	return b.view(p, now), nil
}

// Payment returns the payment with id as it is now, or a 404 refusal.
func (b *Bank) Payment(id string) (Payment, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	p, ok := b.payments[id]
	if !ok {
		return Payment{}, toolbind.NotFound("no payment has id " + id)
	}
	return b.view(p, b.now()), nil
}

// sent reports whether p has been sent by now. The caller holds mu.
func (b *Bank) sent(p *payment, now time.Time) bool {
	return !now.Before(p.createdAt.Add(b.settleAfter))
}

// view is p as it is at now. The caller holds mu.
func (b *Bank) view(p *payment, now time.Time) Payment {
	out := Payment{ID: p.id, Order: p.order, Status: paymentsv1.PaymentStatus_PAYMENT_STATUS_PENDING, CreatedAt: p.createdAt}
	if b.sent(p, now) {
		out.Status, out.SentAt = paymentsv1.PaymentStatus_PAYMENT_STATUS_SENT, p.createdAt.Add(b.settleAfter)
	}
	return out
}
