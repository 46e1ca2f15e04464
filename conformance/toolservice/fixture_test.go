package toolservice_test

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	conformancev1 "github.com/garm-dev/garm/conformance/gen/garm/conformance/v1"
	"github.com/garm-dev/garm/conformance/reference"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/runtime/toolbind"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"google.golang.org/protobuf/proto"
)

// fixture is a second, deliberately small implementation of the hop
// contract in Go, written beside the kit so that each of its promises can
// be broken alone: break names the one promise it does not keep ("" keeps
// them all).
type fixture struct {
	brk       string
	base      context.Context // cancelled when the test ends, so no handler outlives it
	endpoints []fixtureEndpoint
	serial    sync.Mutex
}

type fixtureEndpoint struct {
	ref        toolbind.ToolRef
	newRequest func() proto.Message
	handle     toolbind.Handler
}

func (f *fixture) Endpoint(ref toolbind.ToolRef, newRequest func() proto.Message, h toolbind.Handler) error {
	f.endpoints = append(f.endpoints, fixtureEndpoint{ref, newRequest, h})
	return nil
}

// serveFixture serves the conformance contract through a fixture with one
// promise broken, until the test ends.
func serveFixture(t *testing.T, nc *nats.Conn, brk string) {
	t.Helper()
	base, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	f := &fixture{brk: brk, base: base}
	if err := conformancev1.ServeConformance(f, reference.Handler{}); err != nil {
		t.Fatal(err)
	}
	metadata := map[string]string{wire.IdentityMetadata: conformancev1.DescriptorHash, wire.ContractVersionMetadata: conformancev1.ContractVersion}
	if brk == "no-identity" {
		delete(metadata, wire.IdentityMetadata)
	}
	ms, err := micro.AddService(nc, micro.Config{Name: wire.ServiceName(f.endpoints[0].ref.Service), Version: "1.0.0", Metadata: metadata})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ms.Stop() })
	for _, ep := range f.endpoints {
		group := wire.QueueGroup(ep.ref.Service)
		if brk == "own-queue-group" {
			group = "somewhere-else"
		}
		err := ms.AddEndpoint(wire.EndpointName(ep.ref.Subject), micro.HandlerFunc(func(req micro.Request) { f.serve(ep, req) }),
			micro.WithEndpointSubject(ep.ref.Subject), micro.WithEndpointQueueGroup(group))
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) serve(ep fixtureEndpoint, req micro.Request) {
	if f.brk == "one-tool-at-a-time" {
		f.serial.Lock()
		defer f.serial.Unlock()
	}
	fail := func(code, msg string) { _ = req.Error(code, msg, nil) }
	inv, err := f.invocation(req)
	if err != nil {
		fail("400", "missing invocation context")
		return
	}
	ctx := wire.WithInvocation(f.base, inv)
	if d := inv.GetDeadline(); d != nil {
		if f.brk != "runs-late-requests" && !time.Now().Before(d.AsTime()) {
			fail("429", "overloaded")
			return
		}
		if f.brk != "unbounded-handler" {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, d.AsTime())
			defer cancel()
		}
	}
	in := ep.newRequest()
	if err := proto.Unmarshal(req.Data(), in); err != nil || (f.brk != "accepts-unknown-body-fields" && len(in.ProtoReflect().GetUnknown()) > 0) {
		fail("400", "request does not match the contract")
		return
	}
	out, err := ep.handle(ctx, in)
	if f.brk == "nothing-is-empty-answer" && strings.HasSuffix(ep.ref.Method, "/Nothing") {
		// Generated code turns a missing answer into an error; this service
		// answers it as an empty response instead.
		_ = req.Respond(nil)
		return
	}
	if err != nil {
		var coded *toolbind.CodedError
		msg := strings.Join(strings.Fields(strings.ReplaceAll(strings.ReplaceAll(err.Error(), "\r", " "), "\n", " ")), " ")
		if f.brk == "keeps-line-breaks" {
			msg = strings.NewReplacer("\r", "", "\n", "").Replace(err.Error())
		}
		if errors.As(err, &coded) && (toolbind.IsRefusalCode(coded.Code) || f.brk == "passes-unknown-codes") && coded.Code != "" {
			if msg == "" && f.brk != "empty-refusal-message" {
				msg = coded.Code
			}
			fail(coded.Code, msg)
			return
		}
		if msg == "" {
			msg = "internal error"
		}
		fail("500", msg)
		return
	}
	if out == nil || !out.ProtoReflect().IsValid() {
		fail("500", "handler returned no response and no error")
		return
	}
	body, _ := proto.Marshal(out)
	_ = req.Respond(body)
}

// invocation decodes the one Garm-Invocation header, as strictly as the
// contract says unless the fixture breaks that.
func (f *fixture) invocation(req micro.Request) (*toolv1.InvocationContext, error) {
	values := req.Headers().Values(wire.InvocationHeader)
	if len(values) != 1 {
		if f.brk == "accepts-missing-invocation" && len(values) == 0 {
			return &toolv1.InvocationContext{CallId: "invented"}, nil
		}
		return nil, errors.New("not exactly one")
	}
	if f.brk != "lenient-base64" {
		return wire.DecodeInvocation(values[0])
	}
	raw, err := base64.RawStdEncoding.DecodeString(strings.NewReplacer("-", "+", "_", "/", "=", "").Replace(values[0]))
	if err != nil {
		return nil, err
	}
	return wire.DecodeInvocation(base64.StdEncoding.EncodeToString(raw))
}
