package mcp

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/catalogue/cataloguetest"
	"github.com/garm-dev/garm/daemon/internal/chain/instance/instancetest"
	"github.com/garm-dev/garm/daemon/internal/transport"
	"google.golang.org/protobuf/proto"
)

// eventIDs are the per-call ids an answer carries, which are the only thing
// two calls' identical answers may differ in.
var eventIDs = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}`)

func TestOnMCPAWithheldRecordAnswersExactlyAsTheToolsOwnNotFound(t *testing.T) {
	gen := instancetest.Mounted(t)
	r := newRig(t, gen, 0)
	token := r.token(t, map[string]any{"clearance": "PUBLIC", "verbs": []string{"READ", "WRITE"},
		"attrs": map[string]any{"accounts": []string{"A-1"}}})
	payment := gen.Route(instancetest.GetPayment)
	answer := func(json string) transport.Func {
		b, err := proto.Marshal(cataloguetest.Message(t, payment.Output, json))
		if err != nil {
			t.Fatal(err)
		}
		return func(context.Context, *transport.Request) (*transport.Reply, error) { return &transport.Reply{Body: b}, nil }
	}
	call := func() (int, http.Header, string) {
		rec := r.mcp(token, callBody("7", payment.FQN, `{"payment_id":"P-7"}`))
		r.rows()
		return rec.Code, rec.Header(), eventIDs.ReplaceAllString(rec.Body.String(), "<event>")
	}
	r.reply = func(context.Context, *transport.Request) (*transport.Reply, error) {
		return &transport.Reply{ErrorCode: "404", Error: "no such payment"}, nil
	}
	missingStatus, missingHeader, missing := call()
	if !strings.Contains(missing, `"tool_code":"404"`) {
		t.Fatalf("the tool's own 404 on MCP is %s", missing)
	}
	for name, reply := range map[string]transport.Func{
		"another's payment": answer(`{"paymentId":"P-7","accountId":"A-9","amount":"5"}`),
		"an empty answer":   answer(`{}`),
	} {
		r.reply = reply
		status, header, body := call()
		if status != missingStatus || body != missing {
			t.Errorf("%s answered %d %s; a missing payment %d %s", name, status, body, missingStatus, missing)
		}
		for _, h := range []string{"Content-Type", "Cache-Control", "Garm-Catalogue-Digest"} {
			if header.Get(h) != missingHeader.Get(h) {
				t.Errorf("%s: header %s is %q, a missing payment's %q", name, h, header.Get(h), missingHeader.Get(h))
			}
		}
	}
	r.reply = answer(`{"paymentId":"P-7","accountId":"A-1","amount":"5"}`)
	if _, _, own := call(); !strings.Contains(own, `A-1`) || strings.Contains(own, `"isError":true`) {
		t.Fatalf("own payment on MCP: %s", own)
	}
}

func TestOnMCPARequireRefusalIsAnErrorResultNamingTheRule(t *testing.T) {
	gen := instancetest.Mounted(t)
	r := newRig(t, gen, 0)
	token := r.token(t, map[string]any{"clearance": "PUBLIC", "verbs": []string{"READ", "WRITE"},
		"attrs": map[string]any{"accounts": []string{"A-1"}}})
	rec := r.mcp(token, callBody("3", gen.Route(instancetest.Pay).FQN, `{"account_id":"A-9","amount":"1"}`))
	a := decode(t, rec)
	if a.Error != nil || a.Result == nil || !a.Result.IsError ||
		string(a.Result.Structured) != `{"code":"permission_denied","message":"The caller may not make this request.","rule":"pay_from_own"}` {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	if rows := r.rows(); len(rows) != 1 || rows[0].GetInstanceRule() != "pay_from_own" || rows[0].GetSurface() != "mcp" {
		t.Fatalf("rows %v", rows)
	}
}
