package instance_test

import (
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/chain/instance"
	"github.com/garm-dev/garm/daemon/internal/chain/instance/instancetest"
	"github.com/garm-dev/garm/daemon/internal/codec"
	"github.com/garm-dev/garm/daemon/internal/deny"
	celrule "github.com/garm-dev/garm/protoc-gen-garm/compile/instance"
)

// FuzzRulesOnFuzzedRequests runs every require rule of the bank on any
// request that decodes, and its filters on any answer that decodes. Nothing
// may panic; a refusal names a declared rule; the error class is one of the
// closed list; and nothing the request or answer carried reaches the
// refusal's wire body, its ledger detail or the verdict.
func FuzzRulesOnFuzzedRequests(f *testing.F) {
	for _, s := range [][2]string{
		{`{"accountId":"A-1","amount":"1"}`, `{"accounts":[{"accountId":"A-1"}]}`},
		{`{"customerId":"C-1001","tenant":"acme"}`, `{"accounts":[{"accountId":"ZZ"}],"total":9}`},
		{`{"amount":"-9223372036854775808"}`, `{"summary":{"accounts":[{}]}}`},
		{`{}`, `{}`},
	} {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	g := bank(f)
	callers := []who{alice, concierge, staff, nobody, noTenant}
	classes := map[string]bool{"": true}
	for _, c := range celrule.Classes() {
		classes[c.String()] = true
	}
	ids := map[string]bool{}
	// corpus is every static text a refusal or a verdict can hold: a
	// request string found in it proves nothing.
	corpus := "instance rule refused the request withheld the answer (evaluation failed: ) require: reveal: filter: " +
		deny.PermissionDenied.Message() + ` {"code":"permission_denied","message":"rule":`
	for c := range classes {
		corpus += " " + c
	}
	for _, p := range instancetest.Policies() {
		for _, r := range p.GetRequire() {
			ids[r.GetId()] = true
			corpus += " " + r.GetId()
		}
		for _, r := range p.GetFilter() {
			corpus += " " + r.GetId()
		}
	}
	f.Fuzz(func(t *testing.T, request, answer []byte) {
		for _, route := range []string{instancetest.GetCustomer, instancetest.Pay, instancetest.ListAccounts} {
			ct := g.Route(route)
			rules := g.Rules().Of(ct)
			in, err := codec.DecodeRequest(ct.Input, request, true)
			if err != nil {
				continue
			}
			for _, c := range callers {
				var v instance.Verdict
				err := rules.CheckRequest(c.principal(g).View, in, &v)
				if err != nil && !ids[v.Rule] {
					t.Fatalf("refused by %q, not a declared rule", v.Rule)
				}
				out, derr := codec.DecodeRequest(ct.Output, answer, true)
				if derr == nil {
					_ = rules.CheckAnswer(c.principal(g).View, in, out, &v)
				}
				if !classes[v.ErrorClass] {
					t.Fatalf("error class %q is not in the closed list", v.ErrorClass)
				}
				_, body := deny.Wire(err)
				_, detail := deny.Detail(err)
				said := string(body) + detail + v.Rule + strings.Join(v.FiltersApplied, ",") + strings.Join(v.AuditOnly, ",")
				for _, s := range quoted(request) {
					if len(s) >= 4 && strings.Contains(said, s) && !strings.Contains(corpus, s) {
						t.Fatalf("the request's %q reached %q", s, said)
					}
				}
			}
		}
	})
}

// quoted are the JSON strings' contents in b, roughly: what a request
// could carry into a message, keys included.
func quoted(b []byte) []string {
	parts := strings.Split(string(b), `"`)
	var out []string
	for i := 1; i < len(parts); i += 2 {
		out = append(out, parts[i])
	}
	return out
}
