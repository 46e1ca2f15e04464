package quarantine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/catalogue/cataloguetest"
	"github.com/garm-dev/garm/daemon/internal/quarantine"
	calcv1 "github.com/garm-dev/garm/examples/calculator/gen/calc/v1"
	"github.com/garm-dev/garm/runtime/garmtool"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"google.golang.org/protobuf/proto"
)

// otherHash is a descriptor hash no catalogue here has: a service built
// from a changed proto.
const otherHash = "0000000000000000000000000000000000000000000000000000000000000001"

// calculatorGeneration is the calculator example's catalogue: package
// calc.v1, whose hash is calcv1.DescriptorHash.
func calculatorGeneration(t *testing.T) *catalogue.Generation {
	t.Helper()
	g, err := catalogue.Load(cataloguetest.Calculator(t), catalogue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := g.Catalogue.GetDescriptorHashes()["calc.v1"]; got != calcv1.DescriptorHash {
		t.Fatalf("the catalogue's calc.v1 hash is %s, the bindings' %s", got, calcv1.DescriptorHash)
	}
	return g
}

func connect(t *testing.T, url string, opts ...nats.Option) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// serveCalculator runs a real garmtool service carrying the calculator's
// tools and advertising hash, two instances of it; stop ends it.
func serveCalculator(t *testing.T, url, hash string, opts ...nats.Option) (stop func()) {
	t.Helper()
	svc := garmtool.New("calc", "0.1.0", garmtool.WithConcurrency(2), garmtool.WithDrainTimeout(time.Second))
	for _, ref := range calcv1.CalculatorTools {
		ref.DescriptorHash = hash
		err := svc.Endpoint(ref, func() proto.Message { return &calcv1.AddRequest{} },
			func(context.Context, proto.Message) (proto.Message, error) { return nil, errors.New("not served here") })
		if err != nil {
			t.Fatal(err)
		}
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx, nc) }()
	select {
	case <-svc.Ready():
	case err := <-done:
		t.Fatalf("the service did not start: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the service did not start in time")
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			<-done
			nc.Close()
		})
	}
	t.Cleanup(stop)
	return stop
}

// serveWithoutIdentity runs a bare micro service on the calculator's Add
// subject that advertises no descriptor hash.
func serveWithoutIdentity(t *testing.T, url string) {
	t.Helper()
	nc := connect(t, url)
	svc, err := micro.AddService(nc, micro.Config{Name: "calc_v1_Calculator", Version: "0.1.0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Stop() })
	err = svc.AddEndpoint("calc_v1_Calculator_Add", micro.HandlerFunc(func(micro.Request) {}),
		micro.WithEndpointSubject("calc.v1.Calculator.Add"), micro.WithEndpointQueueGroup("calc.v1.Calculator"))
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
}

// serveMute answers $SRV.PING as an instance of the service named but never
// answers its INFO: every round that sees it is unsure of the service's
// package. stop ends it.
func serveMute(t *testing.T, url, name string) (stop func()) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	pong, _ := json.Marshal(micro.Ping{ServiceIdentity: micro.ServiceIdentity{Name: name, ID: "MUTE1", Version: "0.1.0"}, Type: micro.PingResponseType})
	if _, err := nc.Subscribe("$SRV.PING", func(m *nats.Msg) { _ = m.Respond(pong) }); err != nil {
		t.Fatal(err)
	}
	if _, err := nc.Subscribe("$SRV.INFO."+name+".MUTE1", func(*nats.Msg) {}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc.Close
}

func newReconciler(t *testing.T, url string, logs *bytes.Buffer) *quarantine.Reconciler {
	t.Helper()
	o := quarantine.Options{PingWait: 150 * time.Millisecond, InfoTimeout: 250 * time.Millisecond, Interval: 100 * time.Millisecond}
	if logs != nil {
		o.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return quarantine.New(connect(t, url), o)
}

func sweep(t *testing.T, r *quarantine.Reconciler, g *catalogue.Generation) *quarantine.Verdicts {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r.Sweep(ctx, g)
	return r.Current()
}

func TestAMatchingServiceQuarantinesNothing(t *testing.T) {
	srv := garmtooltest.StartServer(t)
	g := calculatorGeneration(t)
	serveCalculator(t, srv.URL(), calcv1.DescriptorHash)
	v := sweep(t, newReconciler(t, srv.URL(), nil), g)
	if reason, ok := v.Quarantined("calc.v1"); ok {
		t.Fatalf("calc.v1 quarantined: %s", reason)
	}
	if !v.Complete {
		t.Error("the round was not complete")
	}
}

func TestAServiceAdvertisingAnotherHashQuarantinesItsPackageWithTheReason(t *testing.T) {
	srv := garmtooltest.StartServer(t)
	g := calculatorGeneration(t)
	serveCalculator(t, srv.URL(), calcv1.DescriptorHash)
	serveCalculator(t, srv.URL(), otherHash)
	var logs bytes.Buffer
	v := sweep(t, newReconciler(t, srv.URL(), &logs), g)
	reason, ok := v.Quarantined("calc.v1")
	if !ok {
		t.Fatal("calc.v1 is not quarantined")
	}
	for _, want := range []string{"package calc.v1", "calc_v1_Calculator", "advertises descriptor hash " + otherHash, "the catalogue's is " + calcv1.DescriptorHash,
		"regenerate the service's code", "rebuild the catalogue", "restart the service"} {
		if !strings.Contains(reason, want) {
			t.Errorf("reason %q does not say %q", reason, want)
		}
	}
	if got := v.Packages(); len(got) != 1 || got[0] != "calc.v1" {
		t.Errorf("quarantined %v", got)
	}
	if _, ok := v.Quarantined("other.v1"); ok {
		t.Error("a package nobody mismatched is quarantined")
	}
	if l := logs.String(); !strings.Contains(l, "level=WARN") || !strings.Contains(l, "package=calc.v1") || !strings.Contains(l, "advertised_hash="+otherHash) ||
		!strings.Contains(l, "go tool buf generate") || !strings.Contains(l, "restart the service") {
		t.Errorf("no warning naming the package and hashes and what to run:\n%s", l)
	}
}

func TestAServiceAdvertisingNoHashQuarantinesItsPackage(t *testing.T) {
	srv := garmtooltest.StartServer(t)
	g := calculatorGeneration(t)
	serveWithoutIdentity(t, srv.URL())
	v := sweep(t, newReconciler(t, srv.URL(), nil), g)
	reason, ok := v.Quarantined("calc.v1")
	if !ok || !strings.Contains(reason, "advertises no descriptor hash") || !strings.Contains(reason, "runtime/garmtool") {
		t.Fatalf("quarantined %v, reason %q", ok, reason)
	}
}

func TestAPackageWithNoRunningServiceIsNotQuarantined(t *testing.T) {
	srv := garmtooltest.StartServer(t)
	g := calculatorGeneration(t)
	v := sweep(t, newReconciler(t, srv.URL(), nil), g)
	if _, ok := v.Quarantined("calc.v1"); ok || !v.Complete {
		t.Fatalf("quarantined %v, complete %v", ok, v.Complete)
	}
}

func TestRestartingTheRightServiceLiftsTheQuarantineOnTheNextCompleteRound(t *testing.T) {
	srv := garmtooltest.StartServer(t)
	g := calculatorGeneration(t)
	var logs bytes.Buffer
	r := newReconciler(t, srv.URL(), &logs)
	stop := serveCalculator(t, srv.URL(), otherHash)
	if _, ok := sweep(t, r, g).Quarantined("calc.v1"); !ok {
		t.Fatal("calc.v1 is not quarantined")
	}
	stop()
	serveCalculator(t, srv.URL(), calcv1.DescriptorHash)
	if reason, ok := sweep(t, r, g).Quarantined("calc.v1"); ok {
		t.Fatalf("still quarantined: %s", reason)
	}
	if l := logs.String(); !strings.Contains(l, "level=INFO") || !strings.Contains(l, "lifted") {
		t.Errorf("no info line on the lift:\n%s", l)
	}
}

func TestAnIncompleteRoundAddsAQuarantineButNeverLiftsOne(t *testing.T) {
	srv := garmtooltest.StartServer(t)
	g := calculatorGeneration(t)
	r := newReconciler(t, srv.URL(), nil)
	stopMute := serveMute(t, srv.URL(), "calc_v1_Calculator")
	stopWrong := serveCalculator(t, srv.URL(), otherHash)

	v := sweep(t, r, g)
	if _, ok := v.Quarantined("calc.v1"); !ok || v.Complete {
		t.Fatalf("an incomplete round seeing a mismatch: quarantined %v, complete %v", ok, v.Complete)
	}

	stopWrong()
	serveCalculator(t, srv.URL(), calcv1.DescriptorHash)
	v = sweep(t, r, g)
	if _, ok := v.Quarantined("calc.v1"); !ok || v.Complete {
		t.Fatalf("an incomplete round lifted: quarantined %v, complete %v", ok, v.Complete)
	}

	stopMute()
	v = sweep(t, r, g)
	if reason, ok := v.Quarantined("calc.v1"); ok || !v.Complete {
		t.Fatalf("the complete round did not lift: %q, complete %v", reason, v.Complete)
	}
}

func TestRunQuarantinesWithinAnIntervalAndLiftsAfterARestart(t *testing.T) {
	srv := garmtooltest.StartServer(t)
	g := calculatorGeneration(t)
	r := newReconciler(t, srv.URL(), nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx, func() *catalogue.Generation { return g }) }()
	t.Cleanup(func() { cancel(); <-done })

	stop := serveCalculator(t, srv.URL(), otherHash)
	eventually(t, func() bool { _, ok := r.Quarantined("calc.v1"); return ok })
	stop()
	serveCalculator(t, srv.URL(), calcv1.DescriptorHash)
	eventually(t, func() bool { _, ok := r.Quarantined("calc.v1"); return !ok })
}

func TestANilVerdictsQuarantinesNothing(t *testing.T) {
	var v *quarantine.Verdicts
	if _, ok := v.Quarantined("calc.v1"); ok || v.Packages() != nil {
		t.Fatal("a nil Verdicts quarantines")
	}
}

func eventually(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
