package compile

import (
	"strings"
	"unicode"
)

// DefaultToolName is the short name of a tool that declares none: the method
// name in snake_case, where a run of capitals is one word and digits stay
// with the word before them ("GetHTTPStatus" → "get_http_status",
// "ListV2Items" → "list_v2_items").
func DefaultToolName(method string) string {
	runes := []rune(method)
	var b strings.Builder
	for i, r := range runes {
		if r == '_' {
			if b.Len() > 0 && !strings.HasSuffix(b.String(), "_") {
				b.WriteByte('_')
			}
			continue
		}
		if unicode.IsUpper(r) && i > 0 && startsWord(runes, i) && b.Len() > 0 && !strings.HasSuffix(b.String(), "_") {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return strings.TrimSuffix(b.String(), "_")
}

// startsWord reports whether the capital at i begins a new word: it follows a
// lower-case letter or a digit, or it ends a run of capitals because a
// lower-case letter follows it ("HTTPStatus": the S).
func startsWord(runes []rune, i int) bool {
	prev := runes[i-1]
	if unicode.IsLower(prev) || unicode.IsDigit(prev) {
		return true
	}
	return unicode.IsUpper(prev) && i+1 < len(runes) && unicode.IsLower(runes[i+1])
}
