package approvals

import (
	"strings"

	"golang.org/x/text/currency"
)

// minorSuffixes end the name of a field recognised as an amount in a
// currency's minor units (decision 0114).
var minorSuffixes = []string{"_minor_units", "_minor"}

// currencyNames are the sibling fields recognised as naming the currency of
// such an amount.
var currencyNames = []string{"currency_code", "currency"}

// reading is how a person reads the material value at path, beside its raw
// text, or "" when there is no other way to read it than the text itself. An
// amount in minor units (a field named *_minor_units or *_minor) whose
// sibling currency field (currency_code or currency, under the same parent)
// holds an ISO 4217 code reads in the currency's units: "125000" with
// "GBP" reads "1,250.00 GBP". Anything not recognised exactly — no sibling,
// an unknown code, a value that is not a whole number — has no reading, so
// the page never shows a guess. Enum values need none: their canonical text
// is already the value's name (wire.MaterialText).
func reading(path string, material map[string]string) string {
	parent, name := "", path
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		parent, name = path[:i+1], path[i+1:]
	}
	minor := false
	for _, s := range minorSuffixes {
		minor = minor || (strings.HasSuffix(name, s) && len(name) > len(s)) || name == strings.TrimPrefix(s, "_")
	}
	if !minor {
		return ""
	}
	for _, c := range currencyNames {
		code, ok := material[parent+c]
		if !ok || len(code) != 3 || strings.ToUpper(code) != code {
			continue
		}
		unit, err := currency.ParseISO(code)
		if err != nil || unit.String() != code {
			continue
		}
		scale, _ := currency.Standard.Rounding(unit)
		if text, ok := inUnits(material[path], scale); ok {
			return text + " " + code
		}
		return ""
	}
	return ""
}

// inUnits is the whole number minor (decimal digits, an optional leading
// minus) divided by 10^scale, its whole part grouped in thousands: "125000",
// 2 is "1,250.00".
func inUnits(minor string, scale int) (string, bool) {
	sign, digits := "", minor
	if strings.HasPrefix(digits, "-") {
		sign, digits = "-", digits[1:]
	}
	if digits == "" || len(digits) > 40 || strings.Trim(digits, "0123456789") != "" {
		return "", false
	}
	for len(digits) <= scale {
		digits = "0" + digits
	}
	whole, frac := digits[:len(digits)-scale], digits[len(digits)-scale:]
	whole = strings.TrimLeft(whole, "0")
	if whole == "" {
		whole = "0"
	}
	var b strings.Builder
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if scale > 0 {
		b.WriteString("." + frac)
	}
	return sign + b.String(), true
}
