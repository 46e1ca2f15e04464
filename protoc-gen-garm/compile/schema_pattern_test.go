package compile

import (
	"math"
	"math/big"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// inRange is the oracle integerPattern must agree with.
func inRange(set []interval, n *big.Int) bool {
	for _, in := range set {
		if in.lo.Cmp(n) <= 0 && n.Cmp(in.hi) <= 0 {
			return true
		}
	}
	return false
}

func iv(lo, hi int64) interval { return interval{big.NewInt(lo), big.NewInt(hi)} }

func TestIntegerPatternMatchesExactlyTheCanonicalSpellingsInRange(t *testing.T) {
	sets := [][]interval{
		{iv(0, 0)}, {iv(7, 7)}, {iv(-7, -7)}, {iv(0, 9)}, {iv(1, 9)}, {iv(-9, 9)}, {iv(-10, 10)},
		{iv(-1000, 999)}, {iv(-999, 1000)}, {iv(3, 1234)}, {iv(-1234, -3)}, {iv(100, 199)}, {iv(101, 198)},
		{iv(-2000, 4), iv(11, 3000)}, {iv(-5, -1), iv(1, 5)}, {iv(990, 1010)}, {iv(0, 1), iv(1000, 1001)},
	}
	for _, set := range sets {
		re := regexp.MustCompile(integerPattern(set))
		for n := int64(-3100); n <= 3100; n++ {
			want := inRange(set, big.NewInt(n))
			if got := re.MatchString(strconv.FormatInt(n, 10)); got != want {
				t.Fatalf("%v: pattern %s matches %d = %v, want %v", set, re, n, got, want)
			}
		}
		for _, bad := range []string{"", "-", "-0", "+1", "01", "00", "1.0", "1e2", " 1", "1 ", "--1", "0x1"} {
			if re.MatchString(bad) {
				t.Errorf("%v: pattern %s matches the non-canonical %q", set, re, bad)
			}
		}
	}
}

func TestIntegerPatternHoldsAtTheEdgesOfEveryIntegerType(t *testing.T) {
	min64, max64 := big.NewInt(math.MinInt64), big.NewInt(math.MaxInt64)
	maxU64 := new(big.Int).SetUint64(math.MaxUint64)
	rng := rand.New(rand.NewPCG(1, 2))
	sets := [][]interval{
		{{min64, max64}}, {{big.NewInt(0), maxU64}},
		{{big.NewInt(math.MinInt32), big.NewInt(math.MaxInt32)}}, {{big.NewInt(0), big.NewInt(math.MaxUint32)}},
		{{min64, big.NewInt(-123456789012345)}, {big.NewInt(98765432109876543), max64}},
		{{big.NewInt(-315576000000), big.NewInt(315576000000)}},
	}
	for _, set := range sets {
		re := regexp.MustCompile(integerPattern(set))
		var probes []*big.Int
		for _, in := range set {
			for _, edge := range []*big.Int{in.lo, in.hi} {
				for d := int64(-3); d <= 3; d++ {
					probes = append(probes, new(big.Int).Add(edge, big.NewInt(d)))
				}
				// Same number of digits, random below and above.
				for range 50 {
					digits := []byte(new(big.Int).Abs(edge).String())
					i := rng.IntN(len(digits))
					digits[i] = byte('0' + rng.IntN(10))
					if digits[0] == '0' && len(digits) > 1 {
						digits[0] = '1'
					}
					p, _ := new(big.Int).SetString(string(digits), 10)
					if edge.Sign() < 0 {
						p.Neg(p)
					}
					probes = append(probes, p)
				}
			}
		}
		probes = append(probes, new(big.Int).Mul(maxU64, big.NewInt(10)), new(big.Int).Neg(new(big.Int).Mul(maxU64, big.NewInt(10))))
		for _, p := range probes {
			want := inRange(set, p)
			if got := re.MatchString(p.String()); got != want {
				t.Errorf("pattern for %v matches %s = %v, want %v", set, p, got, want)
			}
		}
	}
}

func TestPortablePatternKeepsTheCommonSubsetAndRewritesRE2Spellings(t *testing.T) {
	tests := []struct {
		re2, want string
	}{
		{`^[a-z]+$`, `^[a-z]+$`},
		{`^\d{3}-\d{4}$`, `^\d{3}-\d{4}$`},
		{`^\w+(?:\.\w+)*$`, `^\w+(?:\.\w+)*$`},
		{`^a.b$`, `^a[^\n]b$`},
		{`\s+`, `[\t\n\f\r ]+`},
		{`^\S+$`, `^[^\t\n\f\r ]+$`},
		{`[\s,]`, `[\t\n\f\r ,]`},
		{`\Aabc\z`, `^abc$`},
		{`\x41\x{42}\x{20AC}`, `\x41\x42€`},
		{`^(?<year>\d{4})$`, `^(?<year>\d{4})$`},
		{`a{2,}b{1,3}c{4}`, `a{2,}b{1,3}c{4}`},
		{`^[^\]\\-]$`, `^[^\]\\-]$`},
		{`^\$\.\*\+\?\(\)\[\]\{\}\|\/$`, `^\$\.\*\+\?\(\)\[\]\{\}\|\/$`},
		{`^[a-z-]+$`, `^[a-z-]+$`},
		{`^[\d-]+$`, `^[\d-]+$`},
		{`é+`, `é+`},
		{`^a\bb\Bc$`, `^a\bb\Bc$`},
	}
	for _, tt := range tests {
		got, err := portablePattern(tt.re2)
		if err != nil {
			t.Errorf("portablePattern(%q): %v", tt.re2, err)
			continue
		}
		if got != tt.want {
			t.Errorf("portablePattern(%q) = %q, want %q", tt.re2, got, tt.want)
		}
	}
}

func TestARewrittenPatternMatchesWhatTheRE2PatternMatches(t *testing.T) {
	inputs := []string{"", "a", "ab", "a\nb", "a\rb", "a b", "a\u00a0b", "a\tb", "abc", "€", "x€y", "a-b", "12", "1 2"}
	for _, re2 := range []string{`^a.b$`, `\s`, `^\S+$`, `[\s-]`, `\Aab`, `c\z`, `\x{20AC}`, `^.*$`} {
		rewritten, err := portablePattern(re2)
		if err != nil {
			t.Fatalf("%q: %v", re2, err)
		}
		orig, port := regexp.MustCompile(re2), regexp.MustCompile(rewritten)
		for _, in := range inputs {
			if orig.MatchString(in) != port.MatchString(in) {
				t.Errorf("%q and its rewrite %q disagree on %q", re2, rewritten, in)
			}
		}
	}
}

func TestPortablePatternRefusesWhatTheDialectsReadDifferently(t *testing.T) {
	tests := []struct{ re2, says string }{
		{`(?i)abc`, "inline flags"},
		{`(?s:.)`, "inline flags"},
		{`(?P<name>a)`, "(?P<name>"},
		{`\pL`, `\p`},
		{`\p{Greek}`, `\p`},
		{`\QA.B\E`, `\Q`},
		{`[[:alpha:]]`, "'['"},
		{`[]a]`, "starting with ']'"},
		{`a]`, "unescaped ']'"},
		{`a}`, "unescaped '}'"},
		{`x{,3}`, "literal"},
		{`[\S]`, `\S`},
		{`[\b]`, `\b`},
		{`[\w-z]`, "'-'"},
		{`\123`, `\1`},
		{`\C`, `\C`},
		{`a(`, "not valid RE2"},
		{`(?=a)`, "not valid RE2"},
		{`(a)\1`, "not valid RE2"},
	}
	for _, tt := range tests {
		_, err := portablePattern(tt.re2)
		if err == nil {
			t.Errorf("portablePattern(%q) accepted it", tt.re2)
			continue
		}
		if !strings.Contains(err.Error(), tt.says) {
			t.Errorf("portablePattern(%q) = %v, want it to mention %q", tt.re2, err, tt.says)
		}
	}
}

func TestWellKnownPatternsAreThemselvesPortable(t *testing.T) {
	for _, p := range []string{emailPattern, hostnamePattern, hostnameLastLabel, uuidPattern, tuuidPattern, ulidPattern, ipv4Pattern, base64Pattern, durationPattern} {
		got, err := portablePattern(p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
		} else if got != p {
			t.Errorf("%s is rewritten to %s; write it in the common subset", p, got)
		}
	}
}
