package approvals

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// visible is s as an approver must read it: every character that is invisible, changes how the
// text around it is ordered or shown, or is not text at all is replaced by an escape naming it
// (\u202e, \U000e0041, \x80 for a byte that is not UTF-8), and escaped reports whether any was.
// A grant binds the bytes of a value; an approver shown "IBAN GB29…" while a right-to-left
// override or a zero-width space sits in it would approve bytes they never saw. In a value with
// an escape, a backslash is shown doubled, so an escape cannot be faked by typing one; a value
// without any is shown exactly.
func visible(s string) (shown string, escaped bool) {
	if !needsEscape(s) {
		return s, false
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\':
			b.WriteString(`\\`)
		case hidden(r) && r > 0xFFFF:
			fmt.Fprintf(&b, `\U%08x`, r)
		case hidden(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String(), true
}

// needsEscape reports whether s holds a byte that is not UTF-8 or a hidden character.
func needsEscape(s string) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || hidden(r) {
			return true
		}
		i += size
	}
	return false
}

// hidden reports whether r is not shown as itself: a control character (C0, DEL, C1); a format
// character (Cf: bidirectional marks, embeddings, overrides and isolates, zero-width spaces and
// joiners, the word joiner and invisible operators, the byte-order mark, tag characters, the soft
// hyphen); a line or paragraph separator; a space other than the ASCII one (no-break and
// typographic spaces, which read as a plain space); a variation selector or combining grapheme
// joiner; a private-use or unassigned code point; or one of the fillers that render as blank.
func hidden(r rune) bool {
	switch {
	case r == ' ':
		return false
	case unicode.IsControl(r), unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Zs, unicode.Co, unicode.Variation_Selector):
		return true
	case r == 0x034F, r == 0x115F, r == 0x1160, r == 0x3164, r == 0xFFA0, r == 0x2800:
		return true
	case !unicode.Is(unicode.L, r) && !unicode.Is(unicode.M, r) && !unicode.Is(unicode.N, r) &&
		!unicode.Is(unicode.P, r) && !unicode.Is(unicode.S, r):
		// Unassigned (Cn) and surrogates: nothing a person can read.
		return true
	}
	return false
}
