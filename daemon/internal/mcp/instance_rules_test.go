package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
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
		return func(context.Context, *transport.Request) (*transport.Reply, error) {
			return &transport.Reply{Body: b}, nil
		}
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

func TestToolsListTellsAModelEachToolsLimits(t *testing.T) {
	gen := instancetest.Mounted(t)
	r := newRig(t, gen, 0)
	token := r.token(t, map[string]any{"clearance": "PUBLIC", "verbs": []string{"READ", "WRITE"}})
	rec := r.mcp(token, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	var a struct {
		Result struct {
			Tools []struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Meta        json.RawMessage `json:"_meta"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil || len(a.Result.Tools) != 4 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	for _, tool := range a.Result.Tools {
		if tool.Name == "instfix.v1.get_customer" {
			want := "Reads one customer.\n\nLimits:\n- Reads only the caller's own customer, unless it serves any customer. (rule own_customer)\n- Reads only within the caller's tenant. (rule same_tenant)"
			if tool.Description != want || !strings.Contains(string(tool.Meta), `"dev.garm/rules":[{"id":"own_customer",`) {
				t.Errorf("get_customer is listed as %q %s", tool.Description, tool.Meta)
			}
		}
	}
	if strings.Contains(rec.Body.String(), "principal.") {
		t.Fatalf("tools/list carries a rule's expression: %s", rec.Body)
	}
}

// On the HTTP route too, through the tool plane: status, headers and body
// of a withheld record are the tool's own 404's, but for the call's own
// event id.
func TestOnHTTPAWithheldRecordAnswersExactlyAsTheToolsOwnNotFound(t *testing.T) {
	gen := instancetest.Mounted(t)
	r := newRig(t, gen, 0)
	token := r.token(t, map[string]any{"clearance": "PUBLIC", "verbs": []string{"READ"},
		"attrs": map[string]any{"accounts": []string{"A-1"}}})
	payment := gen.Route(instancetest.GetPayment)
	call := func() (int, http.Header, string) {
		rec := r.http(token, payment.Method, `{"payment_id":"P-7"}`)
		r.rows()
		h := rec.Header().Clone()
		h.Del("Garm-Event-Id")
		return rec.Code, h, rec.Body.String()
	}
	r.reply = func(context.Context, *transport.Request) (*transport.Reply, error) {
		return &transport.Reply{ErrorCode: "404", Error: "no such payment"}, nil
	}
	missingStatus, missingHeader, missing := call()
	b, err := proto.Marshal(cataloguetest.Message(t, payment.Output, `{"paymentId":"P-7","accountId":"A-9"}`))
	if err != nil {
		t.Fatal(err)
	}
	r.reply = func(context.Context, *transport.Request) (*transport.Reply, error) {
		return &transport.Reply{Body: b}, nil
	}
	status, header, body := call()
	if missingStatus != http.StatusNotFound || status != missingStatus || body != missing || !reflect.DeepEqual(header, missingHeader) {
		t.Fatalf("withheld %d %v %s; missing %d %v %s", status, header, body, missingStatus, missingHeader, missing)
	}
}
