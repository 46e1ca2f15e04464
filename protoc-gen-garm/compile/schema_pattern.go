package compile

import (
	"fmt"
	"math/big"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode/utf8"
)

// interval is the integers from lo to hi, both included.
type interval struct{ lo, hi *big.Int }

// integerPattern is a pattern matching exactly the canonical decimal spelling
// (protojson's: no leading zeros, no plus sign, no "-0") of every integer in
// the intervals, which must be non-empty, ascending and disjoint. It is how a
// 64-bit integer, sent as a string, keeps its type's range and its bounds:
// JSON Schema's numeric keywords do not apply to strings.
func integerPattern(set []interval) string {
	var alternatives, negative []string
	one := big.NewInt(1)
	for _, in := range set {
		lo, hi := in.lo, in.hi
		if lo.Sign() < 0 && hi.Sign() > 0 {
			// Spanning zero: the magnitudes both sides share are spelled once,
			// behind an optional minus.
			magnitude := new(big.Int).Neg(lo)
			shared := hi
			if magnitude.Cmp(hi) < 0 {
				shared = magnitude
			}
			alternatives = append(alternatives, "0", "-?"+group(naturalAlternatives(one, shared)))
			next := new(big.Int).Add(shared, one)
			if magnitude.Cmp(shared) > 0 {
				negative = append(negative, naturalAlternatives(next, magnitude)...)
			}
			if hi.Cmp(shared) > 0 {
				alternatives = append(alternatives, naturalAlternatives(next, hi)...)
			}
			continue
		}
		if lo.Sign() < 0 {
			// All negative: a minus and the magnitudes from -hi to -lo.
			negative = append(negative, naturalAlternatives(new(big.Int).Neg(hi), new(big.Int).Neg(lo))...)
			continue
		}
		alternatives = append(alternatives, naturalAlternatives(lo, hi)...)
	}
	if len(negative) > 0 {
		alternatives = append(alternatives, "-"+group(negative))
	}
	return "^" + group(alternatives) + "$"
}

func group(alternatives []string) string {
	if len(alternatives) == 1 {
		return alternatives[0]
	}
	return "(?:" + strings.Join(alternatives, "|") + ")"
}

// naturalAlternatives spells [a, b] (0 <= a <= b) as alternatives in
// ascending order, one run per number of digits, with whole runs of digit
// counts folded into one repeat ([1-9][0-9]{0,17}).
func naturalAlternatives(a, b *big.Int) []string {
	var alts []string
	if a.Sign() == 0 {
		alts = append(alts, "0")
		if b.Sign() == 0 {
			return alts
		}
		a = big.NewInt(1)
	}
	as, bs := a.String(), b.String()
	full := func(digits int) bool {
		lo := digits == len(as) && as != "1"+strings.Repeat("0", digits-1)
		hi := digits == len(bs) && bs != strings.Repeat("9", digits)
		return !lo && !hi
	}
	for d := len(as); d <= len(bs); {
		if full(d) {
			end := d
			for end+1 <= len(bs) && full(end+1) {
				end++
			}
			alts = append(alts, "[1-9]"+digitRepeat(d-1, end-1))
			d = end + 1
			continue
		}
		lo, hi := "1"+strings.Repeat("0", d-1), strings.Repeat("9", d)
		if d == len(as) {
			lo = as
		}
		if d == len(bs) {
			hi = bs
		}
		alts = append(alts, sameLength(lo, hi)...)
		d++
	}
	return alts
}

// sameLength spells the digit strings from lo to hi, of equal length, in
// ascending order.
func sameLength(lo, hi string) []string {
	if lo == hi {
		return []string{lo}
	}
	i := 0
	for lo[i] == hi[i] {
		i++
	}
	prefix, rest := lo[:i], len(lo)-i-1
	loFloor := strings.Trim(lo[i+1:], "0") == ""
	hiCeiling := strings.Trim(hi[i+1:], "9") == ""
	var alts []string
	first, last := lo[i], hi[i]
	if !loFloor {
		for _, s := range sameLength(lo[i+1:], strings.Repeat("9", rest)) {
			alts = append(alts, prefix+lo[i:i+1]+s)
		}
		first++
	}
	if !hiCeiling {
		last--
	}
	if first <= last {
		alts = append(alts, prefix+digitClass(first, last)+digitRepeat(rest, rest))
	}
	if !hiCeiling {
		for _, s := range sameLength(strings.Repeat("0", rest), hi[i+1:]) {
			alts = append(alts, prefix+hi[i:i+1]+s)
		}
	}
	return alts
}

func digitClass(first, last byte) string {
	switch {
	case first == last:
		return string(first)
	case first == '0' && last == '9':
		return "[0-9]"
	case last == first+1:
		return "[" + string(first) + string(last) + "]"
	default:
		return "[" + string(first) + "-" + string(last) + "]"
	}
}

// digitRepeat is [0-9] repeated from min to max times.
func digitRepeat(min, max int) string {
	switch {
	case max == 0:
		return ""
	case min == max && max == 1:
		return "[0-9]"
	case min == max:
		return "[0-9]{" + strconv.Itoa(min) + "}"
	default:
		return "[0-9]{" + strconv.Itoa(min) + "," + strconv.Itoa(max) + "}"
	}
}

// portablePattern takes a protovalidate pattern (RE2, as Go's regexp reads
// it) and returns it spelled so that RE2 and ECMA-262 in unicode mode (JSON
// Schema's dialect) read it the same way, or refuses it when there is no such
// spelling. A few RE2 spellings are rewritten to their common equivalent
// ("." becomes "[^\n]", "\s" its ASCII class, "\A" "^", "\z" "$", "\x{…}" a
// literal); everything else must already be in the common subset.
func portablePattern(re2 string) (string, error) {
	if _, err := syntax.Parse(re2, syntax.Perl); err != nil {
		return "", fmt.Errorf("pattern %q is not valid RE2: %w", re2, err)
	}
	p := patternScanner{src: re2}
	out, err := p.scan()
	if err != nil {
		return "", fmt.Errorf("pattern %q: %w; protovalidate reads patterns as RE2 and JSON Schema as ECMA-262, so a pattern must mean the same in both (docs/decisions/0007-json-schema-fragments.md)", re2, err)
	}
	if _, err := regexp.Compile(out); err != nil {
		return "", fmt.Errorf("pattern %q rewritten as %q: %w", re2, out, err)
	}
	return out, nil
}

// asciiSpace is RE2's \s; ECMA-262's \s also matches Unicode spaces.
const asciiSpace = `\t\n\f\r `

type patternScanner struct {
	src string
	i   int
	out strings.Builder
	// atom is true when the last thing written can take a quantifier.
	atom bool
}

func (p *patternScanner) scan() (string, error) {
	for p.i < len(p.src) {
		c := p.src[p.i]
		switch c {
		case '\\':
			if err := p.escape(); err != nil {
				return "", err
			}
		case '.':
			p.write(`[^\n]`, true)
			p.i++
		case '[':
			if err := p.class(); err != nil {
				return "", err
			}
		case '(':
			if err := p.openGroup(); err != nil {
				return "", err
			}
		case '{':
			if err := p.repeat(); err != nil {
				return "", err
			}
		case ']', '}':
			return "", fmt.Errorf("an unescaped %q is a syntax error in ECMA-262; escape it", c)
		case ')', '|', '^', '$':
			p.write(string(c), c == ')')
			p.i++
		case '*', '+', '?':
			p.write(string(c), false)
			p.i++
		default:
			r, size := utf8.DecodeRuneInString(p.src[p.i:])
			p.write(string(r), true)
			p.i += size
		}
	}
	return p.out.String(), nil
}

func (p *patternScanner) write(s string, atom bool) {
	p.out.WriteString(s)
	p.atom = atom
}

func (p *patternScanner) openGroup() error {
	rest := p.src[p.i:]
	switch {
	case strings.HasPrefix(rest, "(?:"):
		p.write("(?:", false)
		p.i += 3
	case strings.HasPrefix(rest, "(?P<"):
		return fmt.Errorf("(?P<name>…) is RE2 only; write (?<name>…)")
	case strings.HasPrefix(rest, "(?<"):
		end := strings.IndexByte(rest, '>')
		p.write(rest[:end+1], false)
		p.i += end + 1
	case strings.HasPrefix(rest, "(?"):
		return fmt.Errorf("inline flags (%s…) have no ECMA-262 spelling", rest[:min(len(rest), 4)])
	default:
		p.write("(", false)
		p.i++
	}
	return nil
}

var repeatRE = regexp.MustCompile(`^\{[0-9]+(,[0-9]*)?\}`)

func (p *patternScanner) repeat() error {
	m := repeatRE.FindString(p.src[p.i:])
	if m == "" || !p.atom {
		return fmt.Errorf("a literal %q is read differently by the two dialects; escape it", '{')
	}
	p.write(m, false)
	p.i += len(m)
	return nil
}

// syntaxCharacters may be escaped in both dialects (ECMA-262's unicode mode
// refuses identity escapes of anything else).
const syntaxCharacters = `^$\.*+?()[]{}|/`

// escape handles a backslash outside a character class.
func (p *patternScanner) escape() error {
	if p.i+1 >= len(p.src) {
		return fmt.Errorf("trailing backslash")
	}
	e := p.src[p.i+1]
	switch {
	case strings.IndexByte("dDwWtnrfv", e) >= 0:
		p.write(p.src[p.i:p.i+2], true)
	case e == 'b' || e == 'B':
		p.write(p.src[p.i:p.i+2], false)
	case e == 's':
		p.write("["+asciiSpace+"]", true)
	case e == 'S':
		p.write("[^"+asciiSpace+"]", true)
	case e == 'A':
		p.write("^", false)
	case e == 'z':
		p.write("$", false)
	case e == 'a':
		p.write(`\x07`, true)
	case e == 'x':
		lit, n, err := p.hexEscape()
		if err != nil {
			return err
		}
		p.write(lit, true)
		p.i += n
		return nil
	case strings.IndexByte(syntaxCharacters, e) >= 0:
		p.write(p.src[p.i:p.i+2], true)
	default:
		return fmt.Errorf(`the escape \%c has no common spelling in RE2 and ECMA-262`, e)
	}
	p.i += 2
	return nil
}

// hexEscape reads \xHH or \x{H…} at p.i and spells it \xHH when the code point
// fits (both dialects agree there) or as the literal character.
func (p *patternScanner) hexEscape() (string, int, error) {
	rest := p.src[p.i+2:]
	var digits string
	var n int
	if strings.HasPrefix(rest, "{") {
		end := strings.IndexByte(rest, '}')
		digits, n = rest[1:end], 2+end+1
	} else {
		digits, n = rest[:2], 4
	}
	v, err := strconv.ParseUint(digits, 16, 32)
	if err != nil {
		return "", 0, fmt.Errorf(`bad \x escape`)
	}
	if v <= 0xff {
		return fmt.Sprintf(`\x%02X`, v), n, nil
	}
	return string(rune(v)), n, nil
}

// class copies a bracketed character class.
func (p *patternScanner) class() error {
	p.out.WriteByte('[')
	p.i++
	if p.i < len(p.src) && p.src[p.i] == '^' {
		p.out.WriteByte('^')
		p.i++
	}
	if p.i < len(p.src) && p.src[p.i] == ']' {
		return fmt.Errorf("a class starting with ']' is empty in ECMA-262; escape the ']'")
	}
	// afterSet is true right after a class escape such as \d, where a '-'
	// would be read as a range by one dialect and refused by the other.
	afterSet := false
	for p.i < len(p.src) {
		c := p.src[p.i]
		switch c {
		case ']':
			p.write("]", true)
			p.i++
			return nil
		case '[':
			return fmt.Errorf("'[' inside a class (POSIX classes, nested sets) is read differently by the two dialects; escape it")
		case '-':
			next := byte(0)
			if p.i+1 < len(p.src) {
				next = p.src[p.i+1]
			}
			if (afterSet && next != ']') || (next == '\\' && p.i+2 < len(p.src) && strings.IndexByte("dDwWsS", p.src[p.i+2]) >= 0) {
				return fmt.Errorf("a '-' next to a class escape is read differently by the two dialects; escape it")
			}
			p.out.WriteByte('-')
			p.i++
			afterSet = false
		case '\\':
			if p.i+1 >= len(p.src) {
				return fmt.Errorf("trailing backslash")
			}
			e := p.src[p.i+1]
			afterSet = false
			switch {
			case strings.IndexByte("dDwW", e) >= 0:
				p.out.WriteString(p.src[p.i : p.i+2])
				afterSet = true
			case e == 's':
				p.out.WriteString(asciiSpace)
				afterSet = true
			case strings.IndexByte("tnrfv", e) >= 0:
				p.out.WriteString(p.src[p.i : p.i+2])
			case e == 'a':
				p.out.WriteString(`\x07`)
			case e == 'x':
				lit, n, err := p.hexEscape()
				if err != nil {
					return err
				}
				p.out.WriteString(lit)
				p.i += n
				continue
			case strings.IndexByte(syntaxCharacters, e) >= 0 || e == '-':
				p.out.WriteString(p.src[p.i : p.i+2])
			default:
				return fmt.Errorf(`the escape \%c inside a class has no common spelling in RE2 and ECMA-262`, e)
			}
			p.i += 2
		default:
			r, size := utf8.DecodeRuneInString(p.src[p.i:])
			p.out.WriteRune(r)
			p.i += size
			afterSet = false
		}
	}
	return fmt.Errorf("unterminated class")
}
