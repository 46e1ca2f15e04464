package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go"
)

// loadResult is what one load generator process reports, one JSON line on
// its standard output.
type loadResult struct {
	Callers   int     `json:"callers"`
	Calls     int     `json:"calls"`
	Seconds   float64 `json:"seconds"`
	PerSecond float64 `json:"per_second"`
	P50us     float64 `json:"p50_us"`
	P99us     float64 `json:"p99_us"`
}

// runLoad makes the call with --callers callers, each sending its next call
// when the last is answered, for --warmup (not counted) and then
// --duration. Any failed call fails the run: a figure over errors would
// measure the errors.
func runLoad(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("benche2e load", flag.ContinueOnError)
	target := fs.String("target", "", "direct (a NATS request to the tool) or http (a POST to --url)")
	url := fs.String("url", "", "the route's `url`, for --target http")
	natsURL := fs.String("nats", "", "the bus `url`, for --target direct")
	subject := fs.String("subject", "", "the tool's `subject`, for --target direct")
	token := fs.String("token", "", "the bearer token sent with each HTTP call (none when empty)")
	contentType := fs.String("content-type", "application/proto", "the HTTP body's Content-Type")
	bodyHex := fs.String("body", "", "the body: a JSON text for application/json, else protobuf bytes in hex")
	callers := fs.Int("callers", 1, "concurrent callers")
	warmup := fs.Duration("warmup", 300*time.Millisecond, "calls made first and not counted")
	duration := fs.Duration("duration", 2*time.Second, "how long calls are counted")
	if err := fs.Parse(args); err != nil {
		return err
	}
	body, err := decodeBody(*contentType, *bodyHex)
	if err != nil {
		return err
	}
	var call func(context.Context) error
	switch *target {
	case "direct":
		nc, err := nats.Connect(*natsURL, nats.Name("benche2e-load"))
		if err != nil {
			return err
		}
		defer nc.Close()
		call = directCall(nc, *subject, body)
	case "http":
		if err := checkLoopbackURL(*url); err != nil {
			return err
		}
		client := &http.Client{Transport: &http.Transport{
			MaxIdleConns: 2 * *callers, MaxIdleConnsPerHost: 2 * *callers, DisableCompression: true,
		}}
		call = httpCall(client, *url, *token, *contentType, body)
	default:
		return fmt.Errorf("--target %q: want direct or http", *target)
	}
	res, err := measure(ctx, *callers, *warmup, *duration, call)
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(res)
}

func directCall(nc *nats.Conn, subject string, body []byte) func(context.Context) error {
	return func(ctx context.Context) error {
		deadline := time.Now().Add(callTimeout)
		inv, err := wire.EncodeInvocation(benchInvocation(deadline))
		if err != nil {
			return err
		}
		ctx, cancel := context.WithDeadline(ctx, deadline)
		defer cancel()
		reply, err := nc.RequestMsgWithContext(ctx, &nats.Msg{Subject: subject, Data: body, Header: nats.Header{wire.InvocationHeader: []string{inv}}})
		if err != nil {
			return err
		}
		if code := reply.Header.Get(wire.ErrorCodeHeader); code != "" {
			return fmt.Errorf("the tool refused (%s): %s", code, reply.Header.Get(wire.ErrorHeader))
		}
		return nil
	}
}

func httpCall(client *http.Client, url, token, contentType string, body []byte) func(context.Context) error {
	return func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, callTimeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", contentType)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("answered %d: %.200s", resp.StatusCode, answer)
		}
		return nil
	}
}

// measure runs callers loops of call, counting what ends in the window
// after warmup.
func measure(ctx context.Context, callers int, warmup, duration time.Duration, call func(context.Context) error) (loadResult, error) {
	start := time.Now()
	from, until := start.Add(warmup), start.Add(warmup+duration)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		all   []time.Duration
		first error
	)
	for range callers {
		wg.Go(func() {
			mine := make([]time.Duration, 0, 4096)
			for ctx.Err() == nil {
				t0 := time.Now()
				if t0.After(until) {
					break
				}
				err := call(ctx)
				t1 := time.Now()
				if err != nil {
					mu.Lock()
					first = cmpOr(first, err)
					mu.Unlock()
					break
				}
				if t0.After(from) && !t1.After(until) {
					mine = append(mine, t1.Sub(t0))
				}
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	if first != nil {
		return loadResult{}, first
	}
	if err := ctx.Err(); err != nil {
		return loadResult{}, err
	}
	if len(all) == 0 {
		return loadResult{}, errors.New("no call completed in the measured window")
	}
	slices.Sort(all)
	res := loadResult{
		Callers: callers,
		Calls:   len(all),
		Seconds: duration.Seconds(),
		P50us:   float64(all[len(all)/2]) / 1e3,
		P99us:   float64(all[len(all)*99/100]) / 1e3,
	}
	res.PerSecond = float64(res.Calls) / res.Seconds
	return res, nil
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
