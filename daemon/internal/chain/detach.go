package chain

import (
	"context"
	"time"
)

// Detach is context.WithoutCancel(ctx) for a surface handing the chain its
// request's context: the chain's work — the ledger row, the audit write,
// the tool's reply — must not stop because the caller left, while the
// request's values (a lent span, a trace) stay readable. It answers what
// WithoutCancel answers — no deadline, no Done channel, no error, no
// cause, ctx's values — but as a pointer, so that a value looked up
// through it is not a copy of it boxed into an interface, which
// WithoutCancel's value receiver costs on every lookup: the chain and the
// tracing SDK look up several a call (docs/decisions/0147).
//
// context.Cause finds a cancelled context's cause through a key the context
// package does not export. A detached context is never cancelled, so Cause
// does not ask it today; should it, Detach answers as WithoutCancel does —
// nothing — having learnt the key once, at start, by asking Cause of a
// cancelled context that records the key it is asked for. Should a Go
// release find causes another way, the probe learns no key and Detach is
// WithoutCancel itself.
func Detach(ctx context.Context) context.Context {
	if cancelKey == nil {
		return context.WithoutCancel(ctx)
	}
	return &detached{parent: ctx}
}

type detached struct{ parent context.Context }

func (*detached) Deadline() (time.Time, bool) { return time.Time{}, false }
func (*detached) Done() <-chan struct{}       { return nil }
func (*detached) Err() error                  { return nil }

func (d *detached) Value(key any) any {
	if key == cancelKey {
		return nil
	}
	return d.parent.Value(key)
}

func (d *detached) String() string { return "chain.Detach" }

// cancelKey is the key context.Cause looks a context's cancellation up by,
// as keyProbe saw it asked; nil if Cause asked for none.
var cancelKey = func() any {
	p := new(keyProbe)
	_ = context.Cause(p)
	if len(p.asked) != 1 {
		return nil
	}
	return p.asked[0]
}()

// keyProbe is a cancelled context with no values that records the keys it
// is asked: context.Cause asks a cancelled context for its cancellation.
type keyProbe struct{ asked []any }

func (*keyProbe) Deadline() (time.Time, bool) { return time.Time{}, false }
func (*keyProbe) Done() <-chan struct{}       { return nil }
func (*keyProbe) Err() error                  { return context.Canceled }

func (p *keyProbe) Value(key any) any {
	p.asked = append(p.asked, key)
	return nil
}
