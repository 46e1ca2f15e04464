package payments_test

import (
	"sync"
	"testing"

	"github.com/garm-dev/garm/examples/bank"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"google.golang.org/protobuf/proto"
)

func TestARetryWithTheSameKeyIsAnsweredWithTheFirstPayment(t *testing.T) {
	f := serve(t)
	req := demoPayment()
	req.IdempotencyKey = proto.String("run-7f3a:step-2")
	first, err := f.pay(t, req)
	if err != nil {
		t.Fatal(err)
	}
	again, err := f.pay(t, req)
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(first, again) {
		t.Fatalf("the retry answered %v, the first call %v", again, first)
	}
	if got := f.available(t); got != 2_450_075-bank.DemoAmountMinorUnits {
		t.Fatalf("available %d: the retry paid again", got)
	}
}

// garmd forwards the runner's key on the invocation as well; a caller that
// reaches the tool with the key there only is deduplicated too.
func TestTheInvocationsIdempotencyKeyIsHonouredWhenTheRequestHasNone(t *testing.T) {
	f := serve(t)
	withKey := garmtooltest.WithInvocation(func(inv *toolv1.InvocationContext) { inv.IdempotencyKey = "run-7f3a:step-2" })
	first, err := f.pay(t, demoPayment(), withKey)
	if err != nil {
		t.Fatal(err)
	}
	again, err := f.pay(t, demoPayment(), withKey)
	if err != nil || again.GetPaymentId() != first.GetPaymentId() {
		t.Fatalf("the retry answered %v, %v; want %s", again, err, first.GetPaymentId())
	}
}

func TestTheSameKeyForADifferentPaymentIs409(t *testing.T) {
	f := serve(t)
	req := demoPayment()
	req.IdempotencyKey = proto.String("run-7f3a:step-2")
	if _, err := f.pay(t, req); err != nil {
		t.Fatal(err)
	}
	req.AmountMinorUnits = proto.Int64(125_001)
	_, err := f.pay(t, req)
	garmtooltest.WantRefusal(t, err, "409")
}

func TestWithoutAKeyOrWithAnotherKeyEachCallPays(t *testing.T) {
	f := serve(t)
	ids := map[string]bool{}
	for _, key := range []*string{nil, nil, proto.String("a"), proto.String("b")} {
		req := demoPayment()
		req.IdempotencyKey = key
		p, err := f.pay(t, req)
		if err != nil {
			t.Fatal(err)
		}
		ids[p.GetPaymentId()] = true
	}
	if len(ids) != 4 {
		t.Fatalf("four calls made payments %v, want four", ids)
	}
}

// A refused call records nothing, so its key can make the payment once the
// reason is gone.
func TestARefusedCallDoesNotSpendItsKey(t *testing.T) {
	f := serve(t)
	req := demoPayment()
	req.IdempotencyKey = proto.String("run-7f3a:step-2")
	req.CurrencyCode = proto.String("EUR")
	_, err := f.pay(t, req)
	garmtooltest.WantRefusal(t, err, "422")
	req.CurrencyCode = proto.String(bank.DemoCurrency)
	if _, err := f.pay(t, req); err != nil {
		t.Fatalf("the key after a refusal: %v", err)
	}
}

// Many retries of one call at once pay once.
func TestConcurrentRetriesWithOneKeyPayOnce(t *testing.T) {
	f := serve(t)
	const callers = 16
	var wg sync.WaitGroup
	ids := make([]string, callers)
	errs := make([]error, callers)
	for i := range callers {
		wg.Go(func() {
			req := demoPayment()
			req.IdempotencyKey = proto.String("run-7f3a:step-2")
			p, err := f.pay(t, req)
			ids[i], errs[i] = p.GetPaymentId(), err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil || ids[i] != ids[0] {
			t.Fatalf("caller %d: %s, %v; caller 0: %s", i, ids[i], err, ids[0])
		}
	}
	if got := f.available(t); got != 2_450_075-bank.DemoAmountMinorUnits {
		t.Fatalf("available %d: paid more than once", got)
	}
}
