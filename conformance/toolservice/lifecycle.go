package toolservice

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
)

// readyTimeout bounds how long a started process may take to answer a ping.
const readyTimeout = 15 * time.Second

// exitTimeout bounds how long a signalled process may take to exit before
// the kit kills it.
const exitTimeout = 15 * time.Second

// runLifecycle starts a fresh process for the case, drives it, and always
// leaves it ended.
func runLifecycle(ctx context.Context, cfg Config, c Case, callID string) error {
	p, err := startReady(ctx, cfg)
	if err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- p.Wait() }()
	defer func() {
		select {
		case <-exited:
		case <-time.After(exitTimeout):
			p.Kill()
			<-exited
		}
	}()
	signal := func() error { return p.Signal(syscall.SIGTERM) }

	switch c.Send.Action {
	case "drain_inflight":
		msg, wait, err := buildRequest(c.Send, callID)
		if err != nil {
			return err
		}
		done := make(chan answer, 1)
		go func() { done <- request(ctx, cfg.Conn, msg, wait) }()
		time.Sleep(200 * time.Millisecond)
		if err := signal(); err != nil {
			return err
		}
		return judgeAnswer(c, <-done)
	case "drain_new":
		hold, holdWait, err := buildRequest(Send{Tool: "Sleep", Body: []byte(`{"millis":1500}`)}, callID+"-held")
		if err != nil {
			return err
		}
		held := make(chan answer, 1)
		go func() { held <- request(ctx, cfg.Conn, hold, holdWait) }()
		time.Sleep(200 * time.Millisecond)
		if err := signal(); err != nil {
			return err
		}
		time.Sleep(100 * time.Millisecond)
		msg, wait, err := buildRequest(c.Send, callID)
		if err != nil {
			return err
		}
		res := judgeAnswer(c, request(ctx, cfg.Conn, msg, min(wait, 3*time.Second)))
		<-held
		return res
	case "drain_exit":
		if err := signal(); err != nil {
			return err
		}
		start := time.Now()
		select {
		case err := <-exited:
			exited <- err
			if err != nil {
				return fmt.Errorf("the process exited with %v after SIGTERM, want status 0", err)
			}
			if el := time.Since(start); el > time.Duration(c.Expect.ExitsWithinMillis)*time.Millisecond {
				return fmt.Errorf("the process took %v to exit, want at most %d ms", el.Round(time.Millisecond), c.Expect.ExitsWithinMillis)
			}
			return nil
		case <-time.After(time.Duration(c.Expect.ExitsWithinMillis) * time.Millisecond):
			return fmt.Errorf("the process did not exit within %d ms of SIGTERM", c.Expect.ExitsWithinMillis)
		}
	case "restart":
		if err := signal(); err != nil {
			return err
		}
		select {
		case err := <-exited:
			exited <- err
		case <-time.After(exitTimeout):
			return errors.New("the process did not exit after SIGTERM, so it cannot be restarted")
		}
		q, err := startReady(ctx, cfg)
		if err != nil {
			return fmt.Errorf("restarting: %w", err)
		}
		defer stopProcess(q)
		msg, wait, err := buildRequest(c.Send, callID)
		if err != nil {
			return err
		}
		return judgeAnswer(c, request(ctx, cfg.Conn, msg, wait))
	}
	return fmt.Errorf("unknown lifecycle action %q", c.Send.Action)
}

// startReady starts a process and waits until its service answers a ping.
func startReady(ctx context.Context, cfg Config) (Process, error) {
	p, err := cfg.Start(ctx)
	if err != nil {
		return nil, fmt.Errorf("starting the service: %w", err)
	}
	if err := WaitReady(ctx, cfg.Conn, cfg.Service, readyTimeout); err != nil {
		p.Kill()
		_ = p.Wait()
		return nil, err
	}
	return p, nil
}

// WaitReady waits until $SRV.PING.<service> is answered, for at most d.
func WaitReady(ctx context.Context, nc *nats.Conn, service string, d time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	for {
		pctx, pcancel := context.WithTimeout(ctx, 200*time.Millisecond)
		_, err := nc.RequestWithContext(pctx, "$SRV.PING."+service, nil)
		pcancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the service %s did not answer $SRV.PING within %v", service, d)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// stopProcess sends SIGTERM and waits for the exit, killing the process
// when it does not exit in time.
func stopProcess(p Process) {
	_ = p.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = p.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(exitTimeout):
		p.Kill()
		<-done
	}
}
