package chain_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/garm-dev/garm/daemon/internal/chain"
)

type detachKey struct{ n int }

// TestDetachAnswersWhatWithoutCancelAnswers holds chain.Detach to
// context.WithoutCancel over a request's context that was cancelled with a
// cause and had a deadline: the same deadline, Done, Err, Cause and values,
// and contexts derived from it behave alike.
func TestDetachAnswersWhatWithoutCancelAnswers(t *testing.T) {
	cause := errors.New("the caller left")
	parent := context.WithValue(context.Background(), detachKey{1}, "one")
	parent, stop := context.WithDeadline(parent, time.Now().Add(time.Hour))
	defer stop()
	parent, cancel := context.WithCancelCause(parent)
	parent = context.WithValue(parent, detachKey{2}, "two")
	cancel(cause)

	for name, ctx := range map[string]context.Context{
		"Detach":         chain.Detach(parent),
		"WithoutCancel":  context.WithoutCancel(parent),
		"a value on top": context.WithValue(chain.Detach(parent), detachKey{3}, "three"),
	} {
		t.Run(name, func(t *testing.T) {
			if d, ok := ctx.Deadline(); ok || !d.IsZero() {
				t.Errorf("deadline %v", d)
			}
			if ctx.Done() != nil || ctx.Err() != nil {
				t.Errorf("done %v, err %v", ctx.Done(), ctx.Err())
			}
			if c := context.Cause(ctx); c != nil {
				t.Errorf("cause %v: the parent's cancellation shows through", c)
			}
			if ctx.Value(detachKey{1}) != "one" || ctx.Value(detachKey{2}) != "two" || ctx.Value(detachKey{9}) != nil {
				t.Error("the parent's values are not read through")
			}
			child, cancelChild := context.WithCancelCause(ctx)
			if child.Err() != nil {
				t.Fatal("a child of a detached context starts cancelled")
			}
			own := errors.New("the chain's own")
			cancelChild(own)
			if !errors.Is(child.Err(), context.Canceled) || context.Cause(child) != own {
				t.Errorf("a child's err %v, cause %v", child.Err(), context.Cause(child))
			}
			ran := make(chan struct{})
			stopAfter := context.AfterFunc(ctx, func() { close(ran) })
			if !stopAfter() {
				t.Error("AfterFunc on a detached context ran")
			}
		})
	}
}

// cancelledOnTop is a context of another kind than the context package's,
// cancelled, over a detached one: context.Cause asks it for its
// cancellation, which must not be the request's.
type cancelledOnTop struct{ context.Context }

func (cancelledOnTop) Err() error { return context.Canceled }

func TestACauseIsNotReadThroughADetachedContext(t *testing.T) {
	parent, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("the caller left"))
	for name, ctx := range map[string]context.Context{
		"Detach":        chain.Detach(parent),
		"WithoutCancel": context.WithoutCancel(parent),
	} {
		if c := context.Cause(cancelledOnTop{ctx}); c != context.Canceled {
			t.Errorf("%s: cause %v, want the context's own error", name, c)
		}
	}
}

func TestDetachLearnedTheCauseKey(t *testing.T) {
	if fmt.Sprint(chain.Detach(context.Background())) != "chain.Detach" {
		t.Fatal("Detach fell back to WithoutCancel: the probe learned no key context.Cause asks for")
	}
}

// A value looked up through Detach allocates nothing; through
// WithoutCancel, each lookup boxes its receiver.
func TestALookupThroughDetachAllocatesNothing(t *testing.T) {
	type key struct{}
	parent := context.WithValue(context.Background(), key{}, "one")
	d, w := chain.Detach(parent), context.WithoutCancel(parent)
	if n := testing.AllocsPerRun(100, func() { _ = d.Value(key{}) }); n != 0 {
		t.Errorf("a lookup through Detach allocates %v", n)
	}
	if n := testing.AllocsPerRun(100, func() { _ = w.Value(key{}) }); n != 1 {
		t.Logf("a lookup through WithoutCancel allocates %v, where this test was written when it allocated 1", n)
	}
}
