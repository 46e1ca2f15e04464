package store_test

import (
	"testing"
	"time"

	"github.com/garm-dev/garm/examples/bank/store"
)

func TestAStoreThatHasMadeMaxPaymentsRefusesWith429(t *testing.T) {
	b := newBank(t, func() time.Time { return start })
	b.SetMade(store.MaxPayments - 1)
	p, err := b.Pay(store.Order{FromAccountID: "A-00001", Amount: 1, Currency: "GBP"}, "")
	if err != nil || p.ID != "PAY-999999" {
		t.Fatalf("the last payment: %+v, %v", p, err)
	}
	_, err = b.Pay(store.Order{FromAccountID: "A-00001", Amount: 1, Currency: "GBP"}, "")
	wantCode(t, err, "429")
}
