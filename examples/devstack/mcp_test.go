package main

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/garm-dev/garm/protoc-gen-garm/compile"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPIsASecondEncodingOfTheSameSurface drives the official Go SDK's
// client, in both protocol revisions, against a stack started as main
// starts it, and holds every MCP answer to the HTTP answer for the same
// caller and call.
func TestMCPIsASecondEncodingOfTheSameSurface(t *testing.T) {
	s := startStack(t, testOptions(t))
	c := newClient(t, s)
	ledger := readLedger(t, s)
	d := bankDemo()
	tools := map[string]*compile.Tool{}
	for _, tool := range s.Catalogue().Artifact.Tools() {
		tools[tool.FQN] = tool
	}
	customerBody := mustJSON(t, d.customerRequest)
	personas := map[string]string{
		d.support:            c.token(d.support, ""),
		d.analyst:            c.token(d.analyst, ""),
		d.outsider:           c.token(d.outsider, ""),
		d.treasurer:          c.token(d.treasurer, ""),
		d.agent + ">support": c.token(d.support, d.agent),
	}
	ctx := context.Background()

	t.Run("each persona's tools/list is its ListTools, tool for tool and schema for schema", func(t *testing.T) {
		for who, token := range personas {
			var http struct {
				Tools []struct {
					FQN            string          `json:"fqn"`
					Title          string          `json:"title"`
					ApprovalMode   string          `json:"approval_mode"`
					MaterialFields []string        `json:"material_fields"`
					InputSchema    json.RawMessage `json:"input_schema"`
				} `json:"tools"`
			}
			if err := json.Unmarshal([]byte(c.call(listToolsRoute, token, `{}`).body), &http); err != nil {
				t.Fatal(err)
			}
			for _, era := range []string{handshakeEra, statelessEra} {
				res, err := mcpSession(t, s, token, era).ListTools(ctx, nil)
				if err != nil {
					t.Fatalf("%s at %s: %v", who, era, err)
				}
				if len(res.Tools) != len(http.Tools) || len(res.Tools) == 0 && who != d.outsider {
					t.Fatalf("%s at %s: MCP lists %d tools, ListTools %d", who, era, len(res.Tools), len(http.Tools))
				}
				for i, got := range res.Tools {
					want := http.Tools[i]
					schema, _ := json.Marshal(got.InputSchema)
					if got.Name != want.FQN || got.Title != want.Title || !sameJSON(t, schema, want.InputSchema) {
						t.Errorf("%s at %s: tool %d is %s %q %s, ListTools %s %q %s", who, era, i, got.Name, got.Title, schema, want.FQN, want.Title, want.InputSchema)
					}
					if got.Meta["dev.garm/approval_mode"] != want.ApprovalMode || !reflect.DeepEqual(anyStrings(got.Meta["dev.garm/material_fields"]), want.MaterialFields) {
						t.Errorf("%s: %s _meta %v", who, got.Name, got.Meta)
					}
					if !strings.HasPrefix(got.Description, tools[got.Name].Policy.GetDescription()) {
						t.Errorf("%s: %s's description %q does not start with the contract's", who, got.Name, got.Description)
					}
				}
			}
		}
	})

	t.Run("an answer over MCP is the HTTP answer byte for byte, and writes a row saying mcp", func(t *testing.T) {
		route := tools[d.customerTool].Method
		for _, who := range []string{d.support, d.analyst, d.agent + ">support"} {
			overHTTP := c.call(route, personas[who], customerBody)
			for _, era := range []string{handshakeEra, statelessEra} {
				res, err := mcpSession(t, s, personas[who], era).CallTool(ctx, &sdk.CallToolParams{Name: d.customerTool, Arguments: d.customerRequest})
				if err != nil || res.IsError {
					t.Fatalf("%s at %s: %v %+v", who, era, err, res)
				}
				structured, _ := json.Marshal(res.StructuredContent)
				text := res.Content[0].(*sdk.TextContent).Text
				if !sameJSON(t, structured, []byte(overHTTP.body)) || text != overHTTP.body {
					t.Errorf("%s at %s: MCP answered\n%s\n%s\nHTTP answered\n%s", who, era, structured, text, overHTTP.body)
				}
				id, _ := res.Meta["dev.garm/event_id"].(string)
				row := ledger.rowFor(id)
				if row.GetSurface() != "mcp" || row.GetTool() != d.customerTool || row.GetOutcome() != "ok" || row.GetClientName() != clientNameFor(era) {
					t.Errorf("%s at %s: the row says surface %q, tool %q, outcome %q, client %q", who, era, row.GetSurface(), row.GetTool(), row.GetOutcome(), row.GetClientName())
				}
				if res.Meta["dev.garm/catalogue_digest"] != row.GetCatalogueDigest() {
					t.Errorf("the result's digest %v is not the row's %s", res.Meta["dev.garm/catalogue_digest"], row.GetCatalogueDigest())
				}
			}
		}
	})

	t.Run("an invisible tool and an unknown one answer the same, byte for byte", func(t *testing.T) {
		for _, era := range []string{handshakeEra, statelessEra} {
			var meta map[string]any
			var hdr []string
			if era == statelessEra {
				meta, hdr = statelessMeta(nil), []string{"Mcp-Protocol-Version", statelessEra}
			}
			invisible := c.rpc(personas[d.outsider], rpcBody(t, 7, "tools/call", map[string]any{"name": d.customerTool, "arguments": d.customerRequest, "_meta": meta}), hdr...)
			unknown := c.rpc(personas[d.outsider], rpcBody(t, 7, "tools/call", map[string]any{"name": "accounts.v1.no_such_tool", "arguments": d.customerRequest, "_meta": meta}), hdr...)
			routeAsName := c.rpc(personas[d.outsider], rpcBody(t, 7, "tools/call", map[string]any{"name": tools[d.customerTool].Method, "arguments": d.customerRequest, "_meta": meta}), hdr...)
			if invisible.body != unknown.body || invisible.status != unknown.status || routeAsName.body != unknown.body {
				t.Fatalf("at %s: invisible %d %s, unknown %d %s, route as name %s", era, invisible.status, invisible.body, unknown.status, unknown.body, routeAsName.body)
			}
			if r := decodeRPC(t, unknown); r.Error == nil || strings.Contains(unknown.body, "no_such_tool") {
				t.Fatalf("at %s: %s", era, unknown.body)
			}
		}
	})

	t.Run("a payment without a grant is refused, and with one succeeds exactly once", func(t *testing.T) {
		cs := mcpSession(t, s, personas[d.treasurer], statelessEra)
		payment := tools[d.paymentTool]
		refused, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: d.paymentTool, Arguments: d.paymentRequest})
		if err != nil || !refused.IsError {
			t.Fatalf("%v %+v", err, refused)
		}
		var body struct {
			Code           string   `json:"code"`
			Tool           string   `json:"tool"`
			MaterialFields []string `json:"material_fields"`
			MaxGrantAge    int      `json:"max_grant_age_seconds"`
		}
		structured, _ := json.Marshal(refused.StructuredContent)
		if json.Unmarshal(structured, &body) != nil || body.Code != "grant_required" || body.Tool != d.paymentTool ||
			!reflect.DeepEqual(body.MaterialFields, payment.Policy.GetApproval().GetMaterialFields()) || body.MaxGrantAge <= 0 {
			t.Fatalf("refused with %s", structured)
		}
		grant := grantFromInbox(t, s, s.IdP().Personas().Users[d.treasurer].Subject, d.paymentTool)
		withGrant := &sdk.CallToolParams{Name: d.paymentTool, Arguments: d.paymentRequest, Meta: sdk.Meta{"dev.garm/grant": grant}}
		paid, err := cs.CallTool(ctx, withGrant)
		if err != nil || paid.IsError {
			t.Fatalf("with the grant: %v %+v", err, paid)
		}
		again, err := cs.CallTool(ctx, withGrant)
		if err != nil || !again.IsError || !strings.Contains(again.Content[0].(*sdk.TextContent).Text, `"permission_denied"`) {
			t.Fatalf("the spent grant: %v %+v", err, again)
		}
	})
}

func clientNameFor(era string) string {
	if era == statelessEra {
		return "garm-devstack-test" // declared on every request
	}
	return "" // a stateless handshake-era call declares nothing
}

func anyStrings(v any) []string {
	out := []string{}
	for _, s := range v.([]any) {
		out = append(out, s.(string))
	}
	return out
}
