package approvals_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/garm-dev/garm/approvals/pending"
)

func TestTheApprovalPageShowsHiddenCharactersOfTheMaterialAsEscapesAndMarksTheRow(t *testing.T) {
	p := startPlane(t)
	for name, tc := range map[string]struct{ value, shown string }{
		"a right-to-left override":     {"GB29NWBK6016133192\u202e9186", `GB29NWBK6016133192\u202e9186`},
		"a zero-width space":           {"GB29\u200bNWBK60161331926819", `GB29\u200bNWBK60161331926819`},
		"a first-strong isolate":       {"\u2068GB29NWBK60161331926819\u2069", `\u2068GB29NWBK60161331926819\u2069`},
		"a byte-order mark":            {"\ufeffGB29NWBK60161331926819", `\ufeffGB29NWBK60161331926819`},
		"a tag character":              {"GB29\U000E0041NWBK", `GB29\U000e0041NWBK`},
		"a control character":          {"GB29\x1bNWBK", `GB29\u001bNWBK`},
		"a no-break space":             {"GB29\u00a0NWBK", `GB29\u00a0NWBK`},
		"a line separator":             {"GB29\u2028NWBK", `GB29\u2028NWBK`},
		"a soft hyphen":                {"GB29\u00adNWBK", `GB29\u00adNWBK`},
		"a backslash beside an escape": {`GB29\u202e` + "\u200b", `GB29\\u202e\u200b`},
	} {
		t.Run(name, func(t *testing.T) {
			q := pending.Request{
				Tool: paymentTool, ToolTitle: "Send a payment", ApproverMinClearance: "CLEARANCE_RESTRICTED",
				ApproverCompartments: []string{"financial"}, MaxGrantAgeSeconds: 300, Subject: treasurer, Tenant: "acme-bank",
				Material: map[string]string{"beneficiary_iban": tc.value, "currency_code": "GBP"},
			}
			r, err := p.store.Ask(bounded(t), q)
			if err != nil {
				t.Fatal(err)
			}
			pg := p.signIn(t, "approver").get(p.svc.RequestURL(r.ID))
			if pg.status != http.StatusOK {
				t.Fatalf("the page: %d", pg.status)
			}
			if strings.Contains(pg.body, tc.value) {
				t.Errorf("the page holds the value's hidden characters raw")
			}
			if !strings.Contains(pg.body, `<tr class="escaped"><th>beneficiary_iban</th><td>`+tc.shown+` <strong`) {
				t.Errorf("the row is not marked and shown as %s:\n%s", tc.shown, pg.body)
			}
			if !strings.Contains(pg.body, `id="escaped-warning"`) {
				t.Error("the page does not warn of the marked row")
			}
			if !strings.Contains(pg.body, `<tr><th>currency_code</th><td>GBP</td></tr>`) {
				t.Error("a plain value is not shown exactly, unmarked")
			}
		})
	}
}

func TestAPageOfPlainValuesShowsThemExactlyAndUnmarked(t *testing.T) {
	p := startPlane(t)
	r := p.ask(t, treasurer, nil, "125000")
	pg := p.signIn(t, "approver").get(p.svc.RequestURL(r.ID))
	if strings.Contains(pg.body, `class="escaped"`) || strings.Contains(pg.body, `id="escaped-warning"`) {
		t.Errorf("a page of plain values is marked:\n%s", pg.body)
	}
	if !strings.Contains(pg.body, "<td>GB29NWBK60161331926819</td>") {
		t.Error("a plain value is not shown exactly")
	}
}

func TestAnAmountInMinorUnitsIsShownInTheCurrencysUnitsBesideItsRawValue(t *testing.T) {
	p := startPlane(t)
	r := p.ask(t, treasurer, nil, "125000")
	pg := p.signIn(t, "approver").get(p.svc.RequestURL(r.ID))
	if !strings.Contains(pg.body, `<th>amount_minor_units</th><td>125000 <span class="reading"`) ||
		!strings.Contains(pg.body, `= 1,250.00 GBP</span></td>`) {
		t.Errorf("the amount is not shown raw and in pounds:\n%s", pg.body)
	}
	if !strings.Contains(pg.body, `<tr><th>currency_code</th><td>GBP</td></tr>`) {
		t.Error("the currency is not shown exactly")
	}
}
