package dispatch_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/chain/dispatch"
	"github.com/garm-dev/garm/daemon/internal/deny"
	"github.com/garm-dev/garm/daemon/internal/transport"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/runtime/wire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

func TestTheDeadlineIsTheSoonerOfTheCallersAndTheToolTimeout(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		header string
		want   time.Duration
		ok     bool
	}{
		{"", 30 * time.Second, true},
		{"1500", 1500 * time.Millisecond, true},
		{"30000", 30 * time.Second, true},
		{"600000", 30 * time.Second, true},
		{"99999999999999999999", 0, false},
		{"0", 0, false},
		{"-5", 0, false},
		{"1.5", 0, false},
		{"10ms", 0, false},
		{" 100", 0, false},
	}
	for _, c := range cases {
		got, err := dispatch.Deadline(now, c.header, 30*time.Second)
		if (err == nil) != c.ok {
			t.Errorf("%q: err %v", c.header, err)
			continue
		}
		if err != nil {
			if d := (*deny.Denied)(nil); !errors.As(err, &d) || d.Code != deny.InvalidArgument {
				t.Errorf("%q: refusal %v is not invalid_argument", c.header, err)
			}
			continue
		}
		if got.Sub(now) != c.want {
			t.Errorf("%q: deadline in %s, want %s", c.header, got.Sub(now), c.want)
		}
	}
}

func TestTheInvocationCarriesAttributionNeverAuthority(t *testing.T) {
	p := &call.Principal{
		Subject: "user:ada", Kind: toolv1.PrincipalKind_PRINCIPAL_KIND_USER, Tenant: "acme",
		Clearance: toolv1.Clearance_CLEARANCE_RESTRICTED, CompartmentNames: []string{"financial"},
		Act:              []call.Actor{{Subject: "runner:r1", Kind: toolv1.PrincipalKind_PRINCIPAL_KIND_SERVICE}, {Subject: "agent:bot", Kind: toolv1.PrincipalKind_PRINCIPAL_KIND_AGENT}},
		ExecutionSubject: "runner:exec",
	}
	deadline := time.Date(2026, 11, 29, 12, 0, 30, 0, time.UTC)
	inv := dispatch.Invocation(p, &dispatch.Hop{CallID: "ev-1", CorrelationID: "corr", Deadline: deadline, Traceparent: "tp", Tracestate: "ts", IdempotencyKey: "idem"})
	want := &toolv1.InvocationContext{
		Attribution: &toolv1.CallContext{Tenant: "acme", CorrelationId: "corr"},
		Principal:   &toolv1.InvocationPrincipal{Subject: "user:ada", Kind: toolv1.PrincipalKind_PRINCIPAL_KIND_USER},
		Act:         []*toolv1.Act{{Subject: "runner:r1", Kind: toolv1.PrincipalKind_PRINCIPAL_KIND_SERVICE}, {Subject: "agent:bot", Kind: toolv1.PrincipalKind_PRINCIPAL_KIND_AGENT}},
		Traceparent: "tp", Tracestate: "ts", CallId: "ev-1", IdempotencyKey: "idem", Agent: "agent:bot",
	}
	got := proto.Clone(inv).(*toolv1.InvocationContext)
	if !got.GetDeadline().AsTime().Equal(deadline) {
		t.Fatalf("deadline %v", got.GetDeadline().AsTime())
	}
	got.Deadline = nil
	if !proto.Equal(got, want) {
		t.Fatalf("invocation\n%v\nwant\n%v", got, want)
	}
}

// The dispatcher is driven through transport.Func here: the replies are the
// hop contract's, as a NATS tool service would send them (the end-to-end
// tests in package garmd do it over a real bus).
func TestRepliesMapOntoTheStatusTable(t *testing.T) {
	tool := &call.Tool{Subject: "t.v1.S.M", Output: (&structpb.Struct{}).ProtoReflect().Descriptor()}
	answer, _ := proto.Marshal(&structpb.Struct{Fields: map[string]*structpb.Value{"a": structpb.NewStringValue("b")}})
	cases := []struct {
		name   string
		reply  *transport.Reply
		err    error
		status int
		kind   string
	}{
		{"an answer", &transport.Reply{Body: answer}, nil, http.StatusOK, ""},
		{"a refusal code passes through", &transport.Reply{ErrorCode: "409", Error: "frozen"}, nil, http.StatusConflict, "tool_refused"},
		{"another code is internal", &transport.Reply{ErrorCode: "500", Error: "boom"}, nil, http.StatusInternalServerError, "tool_failed"},
		{"the runtime shutting down is internal", &transport.Reply{ErrorCode: "503", Error: "shutting down"}, nil, http.StatusInternalServerError, "tool_failed"},
		{"no responders", nil, transport.ErrNoResponders, http.StatusServiceUnavailable, "no_responders"},
		{"the bus is away", nil, transport.ErrNotConnected, http.StatusServiceUnavailable, "bus_unavailable"},
		{"the bus refuses garmd's publish", nil, transport.ErrForbidden, http.StatusServiceUnavailable, "bus_forbidden"},
		{"a timeout", nil, transport.ErrTimeout, http.StatusGatewayTimeout, "timeout"},
		{"an answer that does not decode", &transport.Reply{Body: []byte{0x0a, 0xff}}, nil, http.StatusInternalServerError, "bad_reply"},
	}
	for _, c := range cases {
		var sent *transport.Request
		d := dispatch.New(transport.Func(func(_ context.Context, req *transport.Request) (*transport.Reply, error) {
			sent = req
			return c.reply, c.err
		}))
		deadline := time.Now().Add(time.Minute)
		inv := dispatch.Invocation(&call.Principal{Subject: "s"}, &dispatch.Hop{CallID: "ev", Deadline: deadline})
		out, err := d.Call(context.Background(), tool, inv, (&structpb.Struct{}).ProtoReflect())
		status := http.StatusOK
		if err != nil {
			status, _ = deny.Wire(err)
		}
		if status != c.status {
			t.Errorf("%s: status %d, want %d (%v)", c.name, status, c.status, err)
		}
		if kind, _ := deny.Detail(err); kind != c.kind {
			t.Errorf("%s: error kind %q, want %q", c.name, kind, c.kind)
		}
		if err == nil && out.Interface().(proto.Message) == nil {
			t.Errorf("%s: no answer", c.name)
		}
		if sent == nil || sent.Subject != tool.Subject {
			t.Fatalf("%s: sent %+v", c.name, sent)
		}
		if !sent.Deadline.Equal(deadline) {
			t.Errorf("%s: the request waits until %v, want the call's deadline %v", c.name, sent.Deadline, deadline)
		}
		if got, err := wire.DecodeInvocation(sent.Invocation); err != nil || got.GetCallId() != "ev" {
			t.Errorf("%s: the invocation header did not decode: %v", c.name, err)
		}
	}
}

func TestAToolThatGivesUpAtTheDeadlineIsATimeoutNotAFailure(t *testing.T) {
	tool := &call.Tool{Subject: "t.v1.S.M", Output: (&structpb.Struct{}).ProtoReflect().Descriptor()}
	d := dispatch.New(transport.Func(func(context.Context, *transport.Request) (*transport.Reply, error) {
		return &transport.Reply{ErrorCode: "500", Error: "context deadline exceeded"}, nil
	}))
	inv := dispatch.Invocation(&call.Principal{Subject: "s"}, &dispatch.Hop{CallID: "ev", Deadline: time.Now().Add(-time.Millisecond)})
	_, err := d.Call(context.Background(), tool, inv, (&structpb.Struct{}).ProtoReflect())
	if status, _ := deny.Wire(err); status != http.StatusGatewayTimeout {
		t.Fatalf("a failure after the deadline answered %d (%v)", status, err)
	}
}
