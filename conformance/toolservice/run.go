package toolservice

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"time"

	conformancev1 "github.com/garm-dev/garm/conformance/gen/garm/conformance/v1"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go"
)

// Process is a service process the kit started and may signal.
type Process interface {
	// Signal sends sig to the process.
	Signal(sig syscall.Signal) error
	// Wait waits for the process to exit; nil for status 0.
	Wait() error
	// Kill ends the process at once.
	Kill()
}

// Config is one run of the kit.
type Config struct {
	// Conn reaches the bus the service serves on. Required.
	Conn *nats.Conn
	// Service is the micro service name discovery asks for; empty, the
	// contract's (wire.ServiceName of ContractService).
	Service string
	// Start starts a new service process; nil runs against a process the kit
	// did not start, and its lifecycle cases are skipped.
	Start func(ctx context.Context) (Process, error)
	// Out gets one line per case and the closing count line.
	Out io.Writer
}

// Result is the outcome of one case.
type Result struct {
	Case    Case
	Passed  bool
	Skipped bool
	Reason  string
	Elapsed time.Duration
}

// Run runs cases in order against the service and reports each, then the
// counts. It returns the results; any failure makes Failed true.
func Run(ctx context.Context, cfg Config, cases []Case) ([]Result, error) {
	if cfg.Conn == nil {
		return nil, errors.New("toolservice: no NATS connection")
	}
	if len(cfg.Service) == 0 {
		cfg.Service = wire.ServiceName(ContractService)
	}
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	// Ordinary cases first, against one process when the kit starts it;
	// then the lifecycle cases, each against a fresh process of its own
	// with no other instance in the queue group.
	var ordinary, lifecycle []Case
	for _, c := range cases {
		if c.lifecycle() {
			lifecycle = append(lifecycle, c)
		} else {
			ordinary = append(ordinary, c)
		}
	}
	var stopServing func()
	if cfg.Start != nil && len(ordinary) > 0 {
		p, err := startReady(ctx, cfg)
		if err != nil {
			return nil, err
		}
		stopServing = func() { stopProcess(p) }
		defer func() {
			if stopServing != nil {
				stopServing()
			}
		}()
	}
	var results []Result
	passed, failed, skipped := 0, 0, 0
	for i, c := range append(ordinary, lifecycle...) {
		if c.lifecycle() && stopServing != nil {
			stopServing()
			stopServing = nil
		}
		start := time.Now()
		r := Result{Case: c}
		switch {
		case c.lifecycle() && cfg.Start == nil:
			r.Skipped, r.Reason = true, "needs a process the kit starts (--exec)"
		default:
			err := runCase(ctx, cfg, c, fmt.Sprintf("conformance-%d-%d", time.Now().UnixNano(), i))
			r.Passed = err == nil
			if err != nil {
				r.Reason = err.Error()
			}
		}
		r.Elapsed = time.Since(start)
		switch {
		case r.Skipped:
			skipped++
			fmt.Fprintf(cfg.Out, "skip %s: %s\n", c.Name, r.Reason)
		case r.Passed:
			passed++
			fmt.Fprintf(cfg.Out, "ok   %s\n", c.Name)
		default:
			failed++
			fmt.Fprintf(cfg.Out, "FAIL %s: %s\n", c.Name, oneLine(r.Reason))
		}
		results = append(results, r)
		if ctx.Err() != nil {
			break
		}
	}
	fmt.Fprintf(cfg.Out, "%d passed, %d failed, %d skipped\n", passed, failed, skipped)
	return results, nil
}

// Failed reports whether any result failed.
func Failed(results []Result) bool {
	for _, r := range results {
		if !r.Passed && !r.Skipped {
			return true
		}
	}
	return false
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func runCase(ctx context.Context, cfg Config, c Case, callID string) error {
	switch c.Send.Action {
	case "", "call":
		msg, wait, err := buildRequest(c.Send, callID)
		if err != nil {
			return fmt.Errorf("the case cannot be sent: %w", err)
		}
		return judgeAnswer(c, request(ctx, cfg.Conn, msg, wait))
	case "concurrent":
		return runConcurrent(ctx, cfg, c, callID)
	case "info", "ping", "stats":
		return runDiscovery(ctx, cfg, c)
	case "queue_group":
		return runQueueGroup(ctx, cfg, c, callID)
	}
	return runLifecycle(ctx, cfg, c, callID)
}

func runConcurrent(ctx context.Context, cfg Config, c Case, callID string) error {
	if c.Send.Concurrent == nil {
		return errors.New("the case names no concurrent call")
	}
	first, firstWait, err := buildRequest(*c.Send.Concurrent, callID+"-first")
	if err != nil {
		return err
	}
	done := make(chan answer, 1)
	go func() { done <- request(ctx, cfg.Conn, first, firstWait) }()
	time.Sleep(time.Duration(c.Send.ConcurrentLeadMillis) * time.Millisecond)
	msg, wait, err := buildRequest(c.Send, callID)
	if err != nil {
		return err
	}
	res := judgeAnswer(c, request(ctx, cfg.Conn, msg, wait))
	<-done
	return res
}

func runDiscovery(ctx context.Context, cfg Config, c Case) error {
	subject := "$SRV." + strings.ToUpper(c.Send.Action) + "." + cfg.Service
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	reply, err := cfg.Conn.RequestWithContext(ctx, subject, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", subject, err)
	}
	var got any
	if err := json.Unmarshal(reply.Data, &got); err != nil {
		return fmt.Errorf("%s answered what is not JSON: %v", subject, err)
	}
	text := strings.NewReplacer(
		"{identity}", conformancev1.DescriptorHash,
		"{contract_version}", conformancev1.ContractVersion,
		"{service}", cfg.Service,
		"{queue_group}", wire.QueueGroup(ContractService),
		"{subject_prefix}", ContractService,
	).Replace(string(c.Expect.Info))
	var want any
	if err := json.Unmarshal([]byte(text), &want); err != nil {
		return fmt.Errorf("expected info: %w", err)
	}
	return subset(want, got, subject)
}

// runQueueGroup joins the contract's queue group on Echo's subject and
// sends requests: a service in that group gets some and the kit the rest.
// A service outside it would get every one and the kit too.
func runQueueGroup(ctx context.Context, cfg Config, c Case, callID string) error {
	const n = 40
	subject := subjectOf("Echo")
	var stolen int
	got := make(chan struct{}, n)
	sub, err := cfg.Conn.QueueSubscribe(subject, wire.QueueGroup(ContractService), func(*nats.Msg) { got <- struct{}{} })
	if err != nil {
		return err
	}
	defer sub.Unsubscribe()
	if err := cfg.Conn.Flush(); err != nil {
		return err
	}
	inbox := nats.NewInbox()
	answers := make(chan *nats.Msg, n)
	isub, err := cfg.Conn.ChanSubscribe(inbox, answers)
	if err != nil {
		return err
	}
	defer isub.Unsubscribe()
	for i := range n {
		msg, _, err := buildRequest(Send{Tool: "Echo"}, fmt.Sprintf("%s-%d", callID, i))
		if err != nil {
			return err
		}
		msg.Reply = inbox
		if err := cfg.Conn.PublishMsg(msg); err != nil {
			return err
		}
	}
	answered := 0
	deadline := time.After(3 * time.Second)
	for stolen+answered < n {
		select {
		case <-got:
			stolen++
		case <-answers:
			answered++
		case <-deadline:
			return fmt.Errorf("of %d requests the kit's group member got %d and the service answered %d; the rest went nowhere", n, stolen, answered)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	time.Sleep(100 * time.Millisecond) // a service outside the group answers the kit's share too
	answered += len(answers)
	stolen += len(got)
	if stolen == 0 || answered == 0 || stolen+answered != n {
		return fmt.Errorf("of %d requests the kit's member of queue group %q got %d and the service answered %d; want them shared", n, wire.QueueGroup(ContractService), stolen, answered)
	}
	return nil
}
