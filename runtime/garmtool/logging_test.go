package garmtool_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/garm-dev/garm/runtime/garmtool"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// logLines is a JSON log sink safe for the service's goroutines.
type logLines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logLines) records(t *testing.T) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var records []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.buf.String()), "\n") {
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		records = append(records, r)
	}
	return records
}

func TestOneStartupLineStatesTheEffectiveConfigurationDefaultsIncluded(t *testing.T) {
	var logs logLines
	svc := garmtool.New("echoer", "v2.0.0", garmtool.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
	if err := svc.Endpoint(echo, newString, echoing); err != nil {
		t.Fatal(err)
	}
	h := garmtooltest.Start(t, svc)
	if err := h.Stop(); err != nil {
		t.Fatal(err)
	}
	var startup []map[string]any
	for _, r := range logs.records(t) {
		if r["msg"] == "garmtool: serving" {
			startup = append(startup, r)
		}
	}
	if len(startup) != 1 {
		t.Fatalf("%d startup lines, want 1", len(startup))
	}
	want := map[string]any{
		"name": "echoer", "version": "2.0.0", "concurrency": float64(garmtool.DefaultConcurrency),
		"drain_timeout": float64(garmtool.DefaultDrainTimeout), "identity": echo.DescriptorHash,
		"contract_version": echo.ContractVersion, "services": []any{"test_v1_Echo"}, "tools": []any{"test.v1.echo"},
	}
	for k, v := range want {
		got, _ := json.Marshal(startup[0][k])
		exp, _ := json.Marshal(v)
		if !bytes.Equal(got, exp) {
			t.Errorf("startup %s = %s, want %s", k, got, exp)
		}
	}
}

func TestAPanicIsLoggedWithItsStackAtErrorLevel(t *testing.T) {
	var logs logLines
	svc := garmtool.New("test", "1.0.0", garmtool.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
	if err := svc.Endpoint(echo, newString, func(context.Context, proto.Message) (proto.Message, error) { panic("kaboom") }); err != nil {
		t.Fatal(err)
	}
	h := garmtooltest.Start(t, svc)
	_, err := callEcho(t, h, "x", garmtooltest.WithCallID("evt-7"))
	wantAnswer(t, err, "500", "handler panicked")
	for _, r := range logs.records(t) {
		if r["msg"] == "garmtool: handler panicked" {
			if r["level"] != "ERROR" || r["panic"] != "kaboom" || r["call_id"] != "evt-7" || !strings.Contains(r["stack"].(string), "garmtool") {
				t.Fatalf("panic logged as %v", r)
			}
			return
		}
	}
	t.Fatal("the panic was not logged")
}

// TestANilLoggerIsSilent runs a service through everything it logs — its
// start, a panic, its drain and stop — with a nil logger, listening where a
// logger it was not given would write: slog's default (which the log
// package writes through too) and standard error.
func TestANilLoggerIsSilent(t *testing.T) {
	heard := overheard(t, garmtool.WithLogger(nil))
	if heard != "" {
		t.Fatalf("a service with a nil logger wrote:\n%s", heard)
	}
	// The same run with the default logger is heard: the listening works.
	if heard := overheard(t, garmtool.WithLogger(slog.Default())); !strings.Contains(heard, "handler panicked") {
		t.Fatalf("the listening heard %q from a service logging to the default logger", heard)
	}
}

// overheard starts a service with opt, makes it panic once, stops it and
// returns what reached slog's default logger and standard error meanwhile.
func overheard(t *testing.T, opt garmtool.Option) string {
	t.Helper()
	var heard logLines
	previous := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&heard, nil)))
	defer slog.SetDefault(previous)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = w
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(&heard, r)
	}()
	func() {
		defer func() { os.Stderr = stderr }()
		h := serve(t, func(context.Context, proto.Message) (proto.Message, error) { panic("quietly") }, opt)
		_, err := callEcho(t, h, "x")
		wantAnswer(t, err, "500", "handler panicked")
		if err := h.Stop(); err != nil {
			t.Fatal(err)
		}
	}()
	_ = w.Close()
	<-copied
	_ = r.Close()
	heard.mu.Lock()
	defer heard.mu.Unlock()
	return heard.buf.String()
}

func TestNonPositiveOptionsMeanTheDefaults(t *testing.T) {
	var logs logLines
	svc := garmtool.New("test", "1.0.0", garmtool.WithConcurrency(-3), garmtool.WithDrainTimeout(0),
		garmtool.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
	if err := svc.Endpoint(echo, newString, echoing); err != nil {
		t.Fatal(err)
	}
	garmtooltest.Start(t, svc)
	for _, r := range logs.records(t) {
		if r["msg"] == "garmtool: serving" {
			if r["concurrency"] != float64(garmtool.DefaultConcurrency) || r["drain_timeout"] != float64(garmtool.DefaultDrainTimeout) {
				t.Fatalf("concurrency %v, drain timeout %v; want the defaults", r["concurrency"], r["drain_timeout"])
			}
			return
		}
	}
	t.Fatal("no startup line")
}

// The caller of a request that does not match the contract sees one static
// message; the tool author's log says which tool, what it expects and why.
func TestARequestThatDoesNotMatchTheContractIsLoggedWithTheToolAndWhy(t *testing.T) {
	var logs logLines
	h := serve(t, echoing, garmtool.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
	unknownField := protowire.AppendVarint(protowire.AppendTag(body(t, "hi"), 99, protowire.VarintType), 1)
	wantAnswer(t, request(t, h, validHeader(t), unknownField), "400", "request does not match the contract this service implements")
	if err := h.Stop(); err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, r := range logs.records(t) {
		if r["msg"] != "garmtool: a request does not match the contract" {
			continue
		}
		found = true
		if r["level"] != "WARN" || r["tool"] != echo.FQN || r["want"] != "google.protobuf.StringValue" ||
			!strings.Contains(fmt.Sprint(r["cause"]), "fields the contract does not declare") {
			t.Errorf("the warning does not say which tool and why: %v", r)
		}
	}
	if !found {
		t.Errorf("no warning for a request that does not match the contract:\n%v", logs.records(t))
	}
}
