package garmd

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/quarantine"
)

// quarantineTuning is the reconciler's timing: unset, the package's
// defaults, as in production. It is not configuration an operator needs;
// tests shorten it (export_test.go).
var quarantineTuning atomic.Pointer[quarantine.Options]

// openQuarantine builds the reconciler that keeps packages whose running
// services advertise another descriptor hash from being called, runs its
// first round against gen so the startup report can say what is
// quarantined, and has every catalogue swap re-evaluate.
func (d *Daemon) openQuarantine(ctx context.Context, gen *catalogue.Generation) {
	var o quarantine.Options
	if tuned := quarantineTuning.Load(); tuned != nil {
		o = *tuned
	}
	o.Logger = d.logger
	d.quarantine = quarantine.New(d.nc, o)
	d.quarantine.Sweep(ctx, gen)
	d.onSwap = append(d.onSwap, func(*catalogue.Generation) { d.quarantine.Reevaluate() })
}

// runQuarantine sweeps in the background until the returned function is
// called; it returns once the reconciler has stopped.
func (d *Daemon) runQuarantine(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.quarantine.Run(ctx, d.serving.Load)
	}()
	return func() {
		cancel()
		<-done
	}
}

// quarantineReport is the startup report's line on quarantine: how often
// it is re-evaluated and what the first round quarantined.
func (d *Daemon) quarantineReport() string {
	r := d.quarantine
	at := "nothing quarantined at start"
	if pkgs := r.Current().Packages(); len(pkgs) > 0 {
		at = "quarantined at start: " + strings.Join(pkgs, ", ")
	}
	return fmt.Sprintf("quarantine: services' descriptor hashes checked every %s and on every catalogue swap, %s", r.Interval(), at)
}
