package wire

import (
	"errors"
	"maps"
	"strings"
	"testing"
)

// parseMaterialPreimage reads a pre-image back into its texts: each line is a
// path up to the first unescaped "=", then a value up to the newline, both
// unescaped. That it succeeds and gives back the map it was built from for
// every map is what makes the pre-image injective.
func parseMaterialPreimage(preimage string) (map[string]string, error) {
	texts := map[string]string{}
	rest := preimage
	previous := ""
	for rest != "" {
		path, afterPath, err := unescapeMaterial(rest, '=')
		if err != nil {
			return nil, err
		}
		value, afterValue, err := unescapeMaterial(afterPath, '\n')
		if err != nil {
			return nil, err
		}
		if _, dup := texts[path]; dup {
			return nil, errors.New("a path appears twice")
		}
		if len(texts) > 0 && path <= previous {
			return nil, errors.New("paths are not sorted")
		}
		texts[path], previous, rest = value, path, afterValue
	}
	return texts, nil
}

// unescapeMaterial reads s up to the first unescaped end, undoing \\, \n, \r
// and \=, and returns what follows the end.
func unescapeMaterial(s string, end byte) (text, rest string, err error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case end:
			return b.String(), s[i+1:], nil
		case '\n', '\r':
			return "", "", errors.New("a raw line break inside a field")
		case '\\':
			if i+1 == len(s) {
				return "", "", errors.New("a lone backslash at the end")
			}
			i++
			switch s[i] {
			case '\\':
				b.WriteByte('\\')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case '=':
				if end != '=' {
					return "", "", errors.New(`\= in a value`)
				}
				b.WriteByte('=')
			default:
				return "", "", errors.New("an unknown escape")
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", "", errors.New("a field runs off the end")
}

func TestThePreimageDecodesBackToItsTexts(t *testing.T) {
	for _, texts := range []map[string]string{
		{},
		{"a": ""},
		{"a": Unset},
		{"a": "1\nb=2"},
		{"a": "1", "b": "2"},
		{"a": `1\nb=2`, "b": "\r\n\\"},
		{"a=b": "c", "a": "b=c"},
		{"x\n": "\\=", "": ""},
		{"amount_minor_units": "125000", "beneficiary_iban": "GB29NWBK60161331926819", "currency_code": "GBP"},
	} {
		preimage := string(materialPreimage(texts))
		back, err := parseMaterialPreimage(preimage)
		if err != nil {
			t.Errorf("%q: pre-image %q does not parse: %v", texts, preimage, err)
			continue
		}
		if !maps.Equal(back, texts) {
			t.Errorf("%q: pre-image %q parses back to %q", texts, preimage, back)
		}
	}
}

func TestARealPathIsWrittenAsItIs(t *testing.T) {
	got := string(materialPreimage(map[string]string{"beneficiary.bank.bic": "a=b", "amount_minor_units": "1"}))
	if want := "amount_minor_units=1\nbeneficiary.bank.bic=a=b\n"; got != want {
		t.Errorf("pre-image %q, want %q", got, want)
	}
}

// FuzzMaterialDigest checks that two maps of texts (up to two entries each)
// have the same pre-image only when they are the same map, that every
// pre-image parses back to its map, and that the digest follows the
// pre-image.
func FuzzMaterialDigest(f *testing.F) {
	f.Add("a", "1\nb=2", "", "", "a", "1", "b", "2")
	f.Add("a=b", "c", "", "", "a", "b=c", "", "")
	f.Add("a", `1\`, "b", "2", "a", "1\\\nb=2", "", "")
	f.Add("a", Unset, "b", "", "a", "", "b", Unset)
	f.Add("a\\", "=", "a", "\\=", "a", "\\\\=", "", "")
	f.Add("amount_minor_units", "125000", "currency_code", "GBP", "currency_code", "GBP", "amount_minor_units", "125000")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2, k3, v3, k4, v4 string) {
		a := map[string]string{k1: v1, k2: v2}
		b := map[string]string{k3: v3, k4: v4}
		pa, pb := string(materialPreimage(a)), string(materialPreimage(b))
		for _, c := range []struct {
			texts    map[string]string
			preimage string
		}{{a, pa}, {b, pb}} {
			back, err := parseMaterialPreimage(c.preimage)
			if err != nil {
				t.Fatalf("%q: pre-image %q does not parse: %v", c.texts, c.preimage, err)
			}
			if !maps.Equal(back, c.texts) {
				t.Fatalf("%q: pre-image %q parses back to %q", c.texts, c.preimage, back)
			}
		}
		if same := maps.Equal(a, b); (pa == pb) != same {
			t.Fatalf("%q and %q: equal maps %v, equal pre-images %v (%q)", a, b, same, pa == pb, pa)
		}
		if (MaterialDigest(a) == MaterialDigest(b)) != (pa == pb) {
			t.Fatalf("%q and %q: digests and pre-images disagree", a, b)
		}
	})
}
