package instance_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/chain/instance"
	"github.com/garm-dev/garm/daemon/internal/chain/instance/instancetest"
	"github.com/garm-dev/garm/daemon/internal/deny"
)

func TestARevealRuleWithholdsAsTheToolsOwnNotFound(t *testing.T) {
	t.Parallel()
	g := bank(t)
	ct, rules := tool(t, g, instancetest.GetPayment)
	req := message(t, ct.Input, `{"paymentId":"P-1"}`)
	cases := []struct {
		name     string
		caller   who
		answer   string
		withheld bool
	}{
		{"a payment from the caller's account is shown", alice, `{"paymentId":"P-1","accountId":"A-2","amount":5}`, false},
		{"another's payment is withheld", alice, `{"paymentId":"P-1","accountId":"A-7","amount":5}`, true},
		{"an empty answer is withheld", alice, `{}`, true},
		{"staff see any payment", staff, `{"paymentId":"P-1","accountId":"A-7","amount":5}`, false},
		{"a caller without the attribute sees none", nobody, `{"paymentId":"P-1","accountId":"A-2","amount":5}`, true},
	}
	own, _ := deny.Wire(deny.Refuse("404", "the tool refused with 404: no such payment"))
	_, ownBody := deny.Wire(deny.Refuse("404", "the tool refused with 404: no such payment"))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var v instance.Verdict
			err := rules.CheckAnswer(c.caller.principal(g).View, req, message(t, ct.Output, c.answer), &v)
			if !c.withheld {
				if err != nil || v.Rule != "" {
					t.Fatalf("withheld: %v %+v", err, v)
				}
				return
			}
			status, body := deny.Wire(err)
			if status != own || string(body) != string(ownBody) || deny.Outcome(err) != "error" {
				t.Fatalf("withheld as %d %s, the tool's own not-found is %d %s", status, body, own, ownBody)
			}
			if kind, _ := deny.Detail(err); kind != "tool_refused" || v.Rule != "own_payment" {
				t.Fatalf("kind %q verdict %+v", kind, v)
			}
			var f *deny.Failed
			if !errors.As(err, &f) || f.ToolCode != "404" {
				t.Fatalf("%v", err)
			}
		})
	}
}

func TestFiltersKeepTheCallersRowsInOrderAndHideThatAnyWereRemoved(t *testing.T) {
	t.Parallel()
	g := bank(t)
	ct, rules := tool(t, g, instancetest.ListAccounts)
	req := message(t, ct.Input, `{"customerId":"C-1001"}`)
	const page = `{"accounts":[{"accountId":"A-2","balance":"2"},{"accountId":"A-7","balance":"7"},{"accountId":"A-1","balance":"1"}],` +
		`"total":3,"nextPageToken":"p2","summary":{"accounts":[{"accountId":"A-7"},{"accountId":"A-1"}],"count":2}}`
	over := who{subject: "user:o"} // a list over max_items is absent: step 1 leaves it unbound
	cases := []struct {
		name    string
		caller  who
		want    string
		removed uint32
		applied string
		class   string
	}{
		{"a customer keeps its own rows, in order, and loses the counts", alice,
			`{"accounts":[{"accountId":"A-2","balance":"2"},{"accountId":"A-1","balance":"1"}],"summary":{"accounts":[{"accountId":"A-1"}]}}`,
			2, "own_accounts,own_summary", ""},
		{"staff keep every row and every count", staff, page, 0, "", ""},
		{"an agent keeps only its narrower list", concierge,
			`{"accounts":[{"accountId":"A-1","balance":"1"}],"summary":{"accounts":[{"accountId":"A-1"}]}}`, 3, "own_accounts,own_summary", ""},
		{"a caller whose list was over the limit keeps none", over, `{"summary":{}}`, 5, "own_accounts,own_summary", "absent_attribute"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out := message(t, ct.Output, page)
			var v instance.Verdict
			if err := rules.CheckAnswer(c.caller.principal(g).View, req, out, &v); err != nil {
				t.Fatal(err)
			}
			if got := asJSON(t, out); got != c.want {
				t.Fatalf("kept\n%s\nwant\n%s", got, c.want)
			}
			if v.RowsFiltered != c.removed || strings.Join(v.FiltersApplied, ",") != c.applied || v.ErrorClass != c.class || v.Rule != "" {
				t.Fatalf("verdict %+v", v)
			}
		})
	}
}

func TestAnAnswerWithNothingToFilterIsLeftAlone(t *testing.T) {
	t.Parallel()
	g := bank(t)
	ct, rules := tool(t, g, instancetest.ListAccounts)
	out := message(t, ct.Output, `{"total":0,"nextPageToken":"p"}`)
	var v instance.Verdict
	if err := rules.CheckAnswer(alice.principal(g).View, message(t, ct.Input, `{}`), out, &v); err != nil {
		t.Fatal(err)
	}
	if got := asJSON(t, out); got != `{"total":0,"nextPageToken":"p"}` || v.RowsFiltered != 0 || v.FiltersApplied != nil {
		t.Fatalf("%s %+v", got, v)
	}
}
