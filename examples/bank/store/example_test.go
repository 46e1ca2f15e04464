package store_test

import (
	"fmt"
	"time"

	"github.com/garm-dev/garm/examples/bank/store"
)

// A retry with the same idempotency key is answered with the first
// payment; the same key for a different payment is a conflict.
func ExampleBank_Pay() {
	b, err := store.New(store.Seed{
		Customers: []store.Customer{{ID: "C-0001"}},
		Accounts:  []store.Account{{ID: "A-00001", CustomerID: "C-0001", Currency: "GBP", OpeningBalance: 10_000}},
	}, store.WithClock(func() time.Time { return time.Date(2025, time.November, 28, 9, 30, 0, 0, time.UTC) }))
	if err != nil {
		fmt.Println(err)
		return
	}
	order := store.Order{FromAccountID: "A-00001", Amount: 2_500, Currency: "GBP", BeneficiaryIBAN: "GB29NWBK60161331926819"}
	first, _ := b.Pay(order, "run-1")
	retry, _ := b.Pay(order, "run-1")
	fmt.Println(first.ID, retry.ID, retry.Status)

	order.Amount = 9_999
	_, err = b.Pay(order, "run-1")
	fmt.Println(err)

	balances, _, _ := b.Balances("C-0001")
	fmt.Println(balances[0].Available)
	// Output:
	// PAY-000001 PAY-000001 PAYMENT_STATUS_PENDING
	// the idempotency key was already used for a different payment
	// 7500
}
