package instance_test

import (
	"sync"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/chain/instance"
	"github.com/garm-dev/garm/daemon/internal/chain/instance/instancetest"
)

// One generation's programs and one principal's view are shared by every
// call: many goroutines evaluating them at once must each get their own
// verdict (run under -race).
func TestSharedProgramsAndViewsDecideEachCallAlone(t *testing.T) {
	t.Parallel()
	g := bank(t)
	pay, payRules := tool(t, g, instancetest.Pay)
	list, listRules := tool(t, g, instancetest.ListAccounts)
	view := alice.principal(g).View
	allowed := message(t, pay.Input, `{"accountId":"A-1","amount":"1"}`)
	refused := message(t, pay.Input, `{"accountId":"A-9","amount":"1"}`)
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				var v instance.Verdict
				if err := payRules.CheckRequest(view, allowed, &v); err != nil {
					errs <- "an allowed call was refused: " + err.Error()
					return
				}
				if err := payRules.CheckRequest(view, refused, &v); err == nil || v.Rule != "pay_from_own" {
					errs <- "a refused call was allowed"
					return
				}
				// Each goroutine filters its own answer.
				out := message(t, list.Output, `{"accounts":[{"accountId":"A-1"},{"accountId":"A-9"},{"accountId":"A-2"}]}`)
				v = instance.Verdict{}
				if err := listRules.CheckAnswer(view, message(t, list.Input, `{}`), out, &v); err != nil || v.RowsFiltered != 1 {
					errs <- "a filter decided another call's rows"
					return
				}
				_ = i
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}
