package chain_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/catalogue/cataloguetest"
	"github.com/garm-dev/garm/daemon/internal/transport"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"
)

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
