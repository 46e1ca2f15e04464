package approvals

import "testing"

func TestAnAmountInMinorUnitsReadsInItsCurrencysUnitsOnlyWhenRecognisedExactly(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		path     string
		material map[string]string
		want     string
	}{
		"pounds":                      {"amount_minor_units", map[string]string{"amount_minor_units": "125000", "currency_code": "GBP"}, "1,250.00 GBP"},
		"yen have no minor unit":      {"amount_minor", map[string]string{"amount_minor": "125000", "currency": "JPY"}, "125,000 JPY"},
		"dinars have three decimals":  {"fee_minor_units", map[string]string{"fee_minor_units": "1500", "currency_code": "KWD"}, "1.500 KWD"},
		"a cent":                      {"amount_minor_units", map[string]string{"amount_minor_units": "1", "currency_code": "EUR"}, "0.01 EUR"},
		"a refund":                    {"amount_minor_units", map[string]string{"amount_minor_units": "-2050", "currency_code": "EUR"}, "-20.50 EUR"},
		"a millionaire":               {"amount_minor_units", map[string]string{"amount_minor_units": "123456789012", "currency_code": "USD"}, "1,234,567,890.12 USD"},
		"the sibling under a message": {"payment.amount_minor", map[string]string{"payment.amount_minor": "995", "payment.currency": "CHF"}, "9.95 CHF"},
		"no currency sibling":         {"amount_minor_units", map[string]string{"amount_minor_units": "125000"}, ""},
		"a currency elsewhere":        {"payment.amount_minor", map[string]string{"payment.amount_minor": "995", "currency": "CHF"}, ""},
		"an unknown code":             {"amount_minor_units", map[string]string{"amount_minor_units": "125000", "currency_code": "ZZZ"}, ""},
		"a lower-case code":           {"amount_minor_units", map[string]string{"amount_minor_units": "125000", "currency_code": "gbp"}, ""},
		"an unset amount":             {"amount_minor_units", map[string]string{"amount_minor_units": "<unset>", "currency_code": "GBP"}, ""},
		"not a whole number":          {"amount_minor_units", map[string]string{"amount_minor_units": "12.5", "currency_code": "GBP"}, ""},
		"a field not in minor units":  {"amount", map[string]string{"amount": "125000", "currency_code": "GBP"}, ""},
		"the currency itself":         {"currency_code", map[string]string{"amount_minor_units": "1", "currency_code": "GBP"}, ""},
		"a name that only ends alike": {"x_minor_units", map[string]string{"x_minor_units": "1\u202e0", "currency_code": "GBP"}, ""},
	} {
		if got := reading(tc.path, tc.material); got != tc.want {
			t.Errorf("%s: reading %q, want %q", name, got, tc.want)
		}
	}
}
