package instance_test

import (
	"sync"
	"testing"

	"cel.dev/cel-go/common/types"

	"github.com/garm-dev/garm/protoc-gen-garm/compile/instance"
)

// TestOneProgramAndOneViewServeConcurrentCalls shares a Program and a View
// across goroutines, as garmd does; run under -race.
func TestOneProgramAndOneViewServeConcurrentCalls(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	req, _, _ := messages(t)
	p := compile(t, env, require(t), `'any-customer' in principal.compartments || request.account_id in principal.attrs.accounts`)
	view := env.NewView(customer())
	// A set builds CEL's list the first time a rule uses it as one: the
	// first uses race here.
	asList := compile(t, env, require(t), `principal.attrs.accounts.exists(a, a == request.account_id) && principal.attrs.accounts.size() == 2`)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			own := message(req, map[string]any{"account_id": "A-1"})
			other := message(req, map[string]any{"account_id": "A-9"})
			for i := range 200 {
				r, want := own, true
				if (g+i)%2 == 1 {
					r, want = other, false
				}
				if holds, class := p.Eval(view, r, nil); holds != want || class != instance.ClassNone {
					t.Errorf("holds=%v class=%v, want %v", holds, class, want)
					return
				}
				if holds, class := asList.Eval(view, r, nil); holds != want || class != instance.ClassNone {
					t.Errorf("as a list: holds=%v class=%v, want %v", holds, class, want)
					return
				}
			}
		}()
	}
	// Compiling concurrently on the same Env shares its cached targets.
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := env.Compile(require(t), `request.amount <= 100`); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
}

// TestASetBuildsItsListOnceUnderConcurrentFirstUse uses a fresh set as a
// list from several goroutines at once, outside CEL (whose pools would
// order the goroutines); run under -race.
func TestASetBuildsItsListOnceUnderConcurrentFirstUse(t *testing.T) {
	t.Parallel()
	for range 20 {
		s := instance.NewSet([]string{"A-1", "A-2", "A-3"})
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if s.Get(types.Int(1)) != types.String("A-2") || s.Iterator() == nil {
					t.Error("the set's list is not its sorted members")
				}
			}()
		}
		wg.Wait()
	}
}
