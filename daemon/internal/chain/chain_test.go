package chain_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/catalogue/cataloguetest"
	"github.com/garm-dev/garm/daemon/internal/chain"
	"github.com/garm-dev/garm/daemon/internal/transport"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"
)

// Every terminal path writes exactly one row: a table over the refusals
// and failures the chain can end with, panics included.
func TestEveryTerminalPathWritesExactlyOneLedgerRow(t *testing.T) {
	r := newRig(t)
	token := r.token(t)
	answer := func(context.Context, *transport.Request) (*transport.Reply, error) {
		return &transport.Reply{Body: []byte{0x09, 0, 0, 0, 0, 0, 0, 0x08, 0x40}}, nil
	}
	cases := []struct {
		name    string
		req     *chain.Request
		reply   transport.Func
		status  int
		outcome string
		kind    string
	}{
		{"ok", r.request(token, "/calc.v1.Calculator/Add", `{"a":1,"b":2}`), answer, 200, "ok", ""},
		{"not POST", &chain.Request{HTTPMethod: "GET", Path: "/calc.v1.Calculator/Add"}, answer, 405, "denied", ""},
		{"no token", r.request("", "/calc.v1.Calculator/Add", `{}`), answer, 401, "denied", ""},
		{"unknown route", r.request(token, "/calc.v1.Calculator/Nope", `{}`), answer, 404, "denied", ""},
		{"bad body", r.request(token, "/calc.v1.Calculator/Add", `{"a":"x"}`), answer, 400, "denied", ""},
		{"invalid request", r.request(token, "/calc.v1.Calculator/Add", `{}`), answer, 400, "denied", ""},
		{"no responders", r.request(token, "/calc.v1.Calculator/Add", `{"a":1,"b":2}`), func(context.Context, *transport.Request) (*transport.Reply, error) {
			return nil, transport.ErrNoResponders
		}, 503, "error", "no_responders"},
		{"timeout", r.request(token, "/calc.v1.Calculator/Add", `{"a":1,"b":2}`), func(context.Context, *transport.Request) (*transport.Reply, error) {
			return nil, transport.ErrTimeout
		}, 504, "error", "timeout"},
		{"a tool refusal", r.request(token, "/calc.v1.Calculator/Divide", `{"dividend":1,"divisor":1}`), func(context.Context, *transport.Request) (*transport.Reply, error) {
			return &transport.Reply{ErrorCode: "422", Error: "division by zero"}, nil
		}, 422, "error", "tool_refused"},
		{"a panic in the transport", r.request(token, "/calc.v1.Calculator/Add", `{"a":1,"b":2}`), func(context.Context, *transport.Request) (*transport.Reply, error) {
			panic("the transport blew up")
		}, 500, "error", "panic"},
		{"a reply that does not decode", r.request(token, "/calc.v1.Calculator/Add", `{"a":1,"b":2}`), func(context.Context, *transport.Request) (*transport.Reply, error) {
			return &transport.Reply{Body: []byte{0xff}}, nil
		}, 500, "error", "bad_reply"},
	}
	for _, c := range cases {
		r.recorder.Reset()
		r.reply = c.reply
		resp := r.chain.Run(context.Background(), c.req)
		rows := r.recorder.Rows()
		if len(rows) != 1 {
			t.Fatalf("%s: %d rows", c.name, len(rows))
		}
		row := rows[0]
		if resp.Status != c.status || row.GetOutcome() != c.outcome || row.GetErrorKind() != c.kind || row.GetEventId() != resp.EventID {
			t.Errorf("%s: status %d row %v", c.name, resp.Status, row)
		}
		if resp.Status >= 400 && strings.Contains(string(resp.Body), "blew up") {
			t.Errorf("%s: the panic reached the caller", c.name)
		}
	}
}

func TestNoCatalogueServingIsUnavailableAndLedgered(t *testing.T) {
	r := newRig(t)
	r.serving.Store(nil)
	resp := r.chain.Run(context.Background(), r.request(r.token(t), "/calc.v1.Calculator/Add", `{}`))
	if resp.Status != http.StatusServiceUnavailable || resp.Digest != "" || !strings.Contains(string(resp.Body), `"unavailable"`) {
		t.Fatalf("%d %q %s", resp.Status, resp.Digest, resp.Body)
	}
	if rows := r.recorder.Rows(); len(rows) != 1 || rows[0].GetErrorKind() != "no_catalogue" {
		t.Fatalf("rows %v", rows)
	}
}

func TestTheGenerationReadFirstServesTheWholeCall(t *testing.T) {
	r := newRig(t)
	first := r.serving.Load()
	r.reply = func(context.Context, *transport.Request) (*transport.Reply, error) {
		// A reload lands while the tool is working on the call.
		r.serving.Store(nil)
		return &transport.Reply{Body: []byte{0x09, 0, 0, 0, 0, 0, 0, 0x08, 0x40}}, nil
	}
	resp := r.chain.Run(context.Background(), r.request(r.token(t), "/calc.v1.Calculator/Add", `{"a":1,"b":2}`))
	if resp.Status != http.StatusOK || resp.Digest != first.Digest {
		t.Fatalf("%d %q", resp.Status, resp.Digest)
	}
	if row := r.recorder.Rows()[0]; row.GetCatalogueDigest() != first.Digest {
		t.Fatalf("the row names %q", row.GetCatalogueDigest())
	}
}

func TestTheRequestReachesTheToolInBinaryOnItsSubject(t *testing.T) {
	r := newRig(t)
	var sent *transport.Request
	r.reply = func(_ context.Context, req *transport.Request) (*transport.Reply, error) {
		sent = req
		return &transport.Reply{Body: []byte{0x09, 0, 0, 0, 0, 0, 0, 0x08, 0x40}}, nil
	}
	resp := r.chain.Run(context.Background(), r.request(r.token(t), "/calc.v1.Calculator/Add", `{"a":1,"b":2}`))
	if resp.Status != 200 || string(resp.Body) != `{"sum":3}` {
		t.Fatalf("%d %s", resp.Status, resp.Body)
	}
	gen := r.serving.Load()
	tool := gen.Route("/calc.v1.Calculator/Add")
	if sent.Subject != "calc.v1.Calculator.Add" {
		t.Fatalf("subject %q", sent.Subject)
	}
	in := dynamicpb.NewMessage(tool.Input)
	if err := proto.Unmarshal(sent.Body, in); err != nil {
		t.Fatal(err)
	}
	if got := in.Get(tool.Input.Fields().ByName("b")).Float(); got != 2 {
		t.Fatalf("b = %v", got)
	}
}

func TestAGenerationThatWasNeverMountedFailsClosed(t *testing.T) {
	r := newRig(t)
	unmounted, err := catalogue.Load(cataloguetest.Calculator(t), catalogue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r.serving.Store(unmounted)
	r.reply = func(context.Context, *transport.Request) (*transport.Reply, error) {
		t.Error("an unmounted generation reached the tool")
		return nil, transport.ErrNoResponders
	}
	resp := r.chain.Run(context.Background(), r.request(r.token(t), "/calc.v1.Calculator/Add", `{"a":1,"b":2}`))
	if resp.Status != http.StatusInternalServerError {
		t.Fatalf("%d %s", resp.Status, resp.Body)
	}
	if rows := r.recorder.Rows(); len(rows) != 1 || rows[0].GetErrorKind() != "validation" {
		t.Fatalf("rows %v", rows)
	}
}
