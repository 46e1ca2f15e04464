package garmd_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/examples/calculator/calculator"
	calcv1 "github.com/garm-dev/garm/examples/calculator/gen/calc/v1"
	"github.com/garm-dev/garm/runtime/garmtool"
	"github.com/garm-dev/garm/runtime/toolbind"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// Values of the record the records service answers with. The secrets must
// never reach a caller who may not read them.
const (
	recordName       = "Ada Lovelace"
	recordEmail      = "ada.secret@corp.example"
	recordNationalID = "NI-SECRET-1815"
	recordCity       = "London"
	recordStreet     = "12 Secret Street"
)

// stallStarted is told each time the Stall tool starts working on a call,
// so a test can act while a call is in the tool's hands.
var stallStarted = make(chan struct{}, 1)

// stallHeld, while it holds a channel, keeps the Stall tool on each call
// until that channel is closed, whatever ms the call asked for: a test
// decides when a call in flight ends.
var stallHeld atomic.Pointer[chan struct{}]

// runService serves svc on the bus until the test ends, and returns a
// function that crashes it: its connection closes at once, as a process
// dying would leave it, with no drain.
func runService(t testing.TB, url string, svc *garmtool.Service) (crash func()) {
	t.Helper()
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
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
	case <-time.After(waitTimeout):
		t.Fatal("the service did not start in time")
	}
	t.Cleanup(func() {
		cancel()
		nc.Close()
		<-done
	})
	return nc.Close
}

func startCalculator(t testing.TB, url string, opts ...garmtool.Option) {
	t.Helper()
	svc := garmtool.New("calc", "0.1.0", append([]garmtool.Option{garmtool.WithDrainTimeout(time.Second)}, opts...)...)
	if err := calcv1.ServeCalculator(svc, calculator.Calculator{}); err != nil {
		t.Fatal(err)
	}
	_ = runService(t, url, svc)
}

// startRecordsService serves the records fixture's Records service.
func startRecordsService(t testing.TB, url string, opts ...garmtool.Option) (crash func()) {
	t.Helper()
	return serveFixtureService(t, url, "records", "fix.v1.Records", recordsHandler, opts...)
}

// serveFixtureService serves one service of the fixture catalogue.
func serveFixtureService(t testing.TB, url, name string, service protoreflect.FullName, handler func(method string, out protoreflect.MessageDescriptor) toolbind.Handler, opts ...garmtool.Option) (crash func()) {
	t.Helper()
	return serveServiceOf(t, fixtureCatalogue, url, name, service, "fix.v1", handler, opts...)
}

// serveServiceOf serves one service of a catalogue (of package pkg) from the
// catalogue's own descriptors, with dynamic messages: a real tool service
// on the bus, without generated code. handler gives each method's handler.
func serveServiceOf(t testing.TB, catalogue func() ([]byte, error), url, name string, service protoreflect.FullName, pkg string, handler func(method string, out protoreflect.MessageDescriptor) toolbind.Handler, opts ...garmtool.Option) (crash func()) {
	t.Helper()
	data, err := catalogue()
	if err != nil {
		t.Fatal(err)
	}
	a, err := artifact.Read(data)
	if err != nil {
		t.Fatal(err)
	}
	svc := garmtool.New(name, "0.1.0", append([]garmtool.Option{garmtool.WithDrainTimeout(time.Second)}, opts...)...)
	for _, tool := range a.Tools() {
		if tool.Service.Desc.FullName() != service {
			continue
		}
		in, out := tool.Desc.Input(), tool.Desc.Output()
		ref := toolbind.ToolRef{
			FQN: tool.FQN, Subject: tool.Subject, Method: tool.Method, Service: string(service),
			ContractVersion: "test", DescriptorHash: a.Catalogue.GetDescriptorHashes()[pkg],
		}
		h := handler(string(tool.Desc.Name()), out)
		if err := svc.Endpoint(ref, func() proto.Message { return dynamicpb.NewMessage(in) }, h); err != nil {
			t.Fatal(err)
		}
	}
	return runService(t, url, svc)
}

func recordsHandler(method string, out protoreflect.MessageDescriptor) toolbind.Handler {
	return func(ctx context.Context, req proto.Message) (proto.Message, error) {
		in := req.ProtoReflect()
		res := dynamicpb.NewMessage(out)
		switch method {
		case "GetRecord":
			fillRecord(res, str(in, "id"))
		case "Rename":
			fillRecord(res, str(in, "id"))
			set(res, "name", str(in, "name"))
		case "Refuse":
			return nil, &toolbind.CodedError{Code: str(in, "code"), Message: str(in, "message")}
		case "Stall":
			select {
			case stallStarted <- struct{}{}:
			default:
			}
			ms := in.Get(in.Descriptor().Fields().ByName("ms")).Uint()
			elapsed, released := time.After(time.Duration(ms)*time.Millisecond), (<-chan struct{})(nil)
			if held := stallHeld.Load(); held != nil {
				elapsed, released = nil, *held
			}
			select {
			case <-elapsed:
			case <-released:
			case <-ctx.Done():
				return nil, errors.New("stalled past the deadline")
			}
		case "Echo":
			inv, err := protojson.Marshal(wire.InvocationFrom(ctx))
			if err != nil {
				return nil, err
			}
			set(res, "text", str(in, "text"))
			set(res, "invocation_json", string(inv))
		}
		return res, nil
	}
}

func fillRecord(m *dynamicpb.Message, id string) {
	set(m, "id", id)
	set(m, "name", recordName)
	set(m, "email", recordEmail)
	set(m, "national_id", recordNationalID)
	fd := m.Descriptor().Fields().ByName("addresses")
	list := m.Mutable(fd).List()
	addr := dynamicpb.NewMessage(fd.Message())
	set(addr, "city", recordCity)
	set(addr, "street", recordStreet)
	list.Append(protoreflect.ValueOfMessage(addr))
}

func str(m protoreflect.Message, name protoreflect.Name) string {
	return m.Get(m.Descriptor().Fields().ByName(name)).String()
}

func set(m protoreflect.Message, name protoreflect.Name, v string) {
	m.Set(m.Descriptor().Fields().ByName(name), protoreflect.ValueOfString(v))
}
