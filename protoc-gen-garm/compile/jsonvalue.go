package compile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Schemas are decoded into, assembled as and encoded from plain JSON
// values: map[string]any, []any, string, json.Number, bool and nil. The
// listing assembles a schema per tool and caller shape, so decoding and
// encoding them is most of a first listing's work. Both are written here,
// without reflection, and give exactly what encoding/json gives (a Decoder
// with UseNumber whose More then reports false; an Encoder without HTML
// escaping, less its newline); a fuzz target holds them to it.

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

// decodeJSON decodes one JSON value; anything after it but white space and
// a closing bracket is refused, as a Decoder's More reports it.
func decodeJSON(raw []byte) (any, error) { return decodeJSONString(string(raw)) }

// decodeJSONString is decodeJSON of a string; the strings it decodes
// without escapes share raw's memory.
func decodeJSONString(raw string) (any, error) {
	d := jsonDecoder{data: raw}
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	d.space()
	if d.at < len(raw) && raw[d.at] != ']' && raw[d.at] != '}' {
		return nil, fmt.Errorf("trailing data after JSON value")
	}
	return v, nil
}

type jsonDecoder struct {
	data string
	at   int
}

func (d *jsonDecoder) space() {
	for d.at < len(d.data) {
		switch d.data[d.at] {
		case ' ', '\t', '\r', '\n':
			d.at++
		default:
			return
		}
	}
}

func (d *jsonDecoder) fail(what string) error {
	if d.at >= len(d.data) {
		return io.ErrUnexpectedEOF
	}
	return fmt.Errorf("invalid character %q %s at offset %d", d.data[d.at], what, d.at)
}

func (d *jsonDecoder) value(depth int) (any, error) {
	d.space()
	if d.at >= len(d.data) {
		return nil, io.ErrUnexpectedEOF
	}
	switch c := d.data[d.at]; {
	case c == '{':
		if depth >= maxDepth {
			return nil, errors.New("exceeded max depth")
		}
		d.at++
		object := map[string]any{}
		d.space()
		if d.at < len(d.data) && d.data[d.at] == '}' {
			d.at++
			return object, nil
		}
		for {
			d.space()
			if d.at >= len(d.data) || d.data[d.at] != '"' {
				return nil, d.fail("looking for beginning of object key string")
			}
			name, err := d.string()
			if err != nil {
				return nil, err
			}
			d.space()
			if d.at >= len(d.data) || d.data[d.at] != ':' {
				return nil, d.fail("after object key")
			}
			d.at++
			v, err := d.value(depth + 1)
			if err != nil {
				return nil, err
			}
			object[name] = v
			d.space()
			if d.at < len(d.data) && d.data[d.at] == ',' {
				d.at++
				continue
			}
			if d.at < len(d.data) && d.data[d.at] == '}' {
				d.at++
				return object, nil
			}
			return nil, d.fail("after object key:value pair")
		}
	case c == '[':
		if depth >= maxDepth {
			return nil, errors.New("exceeded max depth")
		}
		d.at++
		list := []any{}
		d.space()
		if d.at < len(d.data) && d.data[d.at] == ']' {
			d.at++
			return list, nil
		}
		for {
			v, err := d.value(depth + 1)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
			d.space()
			if d.at < len(d.data) && d.data[d.at] == ',' {
				d.at++
				continue
			}
			if d.at < len(d.data) && d.data[d.at] == ']' {
				d.at++
				return list, nil
			}
			return nil, d.fail("after array element")
		}
	case c == '"':
		return d.string()
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	}
	return nil, d.fail("looking for beginning of value")
}

func (d *jsonDecoder) literal(word string) error {
	if !strings.HasPrefix(d.data[d.at:], word) {
		for i := 0; i < len(word) && d.at < len(d.data) && d.data[d.at] == word[i]; i++ {
			d.at++
		}
		return d.fail("in literal " + word)
	}
	d.at += len(word)
	return nil
}

func (d *jsonDecoder) number() (json.Number, error) {
	start := d.at
	digits := func() int {
		n := 0
		for d.at < len(d.data) && d.data[d.at] >= '0' && d.data[d.at] <= '9' {
			d.at++
			n++
		}
		return n
	}
	if d.data[d.at] == '-' {
		d.at++
	}
	switch {
	case d.at < len(d.data) && d.data[d.at] == '0':
		d.at++
	case digits() == 0:
		return "", d.fail("in numeric literal")
	}
	if d.at < len(d.data) && d.data[d.at] == '.' {
		d.at++
		if digits() == 0 {
			return "", d.fail("after decimal point in numeric literal")
		}
	}
	if d.at < len(d.data) && (d.data[d.at] == 'e' || d.data[d.at] == 'E') {
		d.at++
		if d.at < len(d.data) && (d.data[d.at] == '+' || d.data[d.at] == '-') {
			d.at++
		}
		if digits() == 0 {
			return "", d.fail("in exponent of numeric literal")
		}
	}
	return json.Number(d.data[start:d.at]), nil
}

// string decodes the string at d.at as encoding/json does: escapes
// resolved, a lone or broken surrogate and invalid UTF-8 each becoming
// U+FFFD, and a control character refused.
func (d *jsonDecoder) string() (string, error) {
	d.at++ // the opening quote
	start := d.at
	for d.at < len(d.data) {
		c := d.data[d.at]
		if c == '"' && utf8.ValidString(d.data[start:d.at]) {
			d.at++
			return d.data[start : d.at-1], nil
		}
		if c == '"' || c == '\\' || c < 0x20 {
			break
		}
		d.at++
	}
	// The slow way, for escapes and errors.
	var out []byte
	d.at = start
	for {
		if d.at >= len(d.data) {
			return "", io.ErrUnexpectedEOF
		}
		c := d.data[d.at]
		switch {
		case c == '"':
			d.at++
			return string(out), nil
		case c < 0x20:
			return "", d.fail("in string literal")
		case c == '\\':
			d.at++
			if d.at >= len(d.data) {
				return "", io.ErrUnexpectedEOF
			}
			switch e := d.data[d.at]; e {
			case '"', '\\', '/':
				out = append(out, e)
				d.at++
			case 'b':
				out = append(out, '\b')
				d.at++
			case 'f':
				out = append(out, '\f')
				d.at++
			case 'n':
				out = append(out, '\n')
				d.at++
			case 'r':
				out = append(out, '\r')
				d.at++
			case 't':
				out = append(out, '\t')
				d.at++
			case 'u':
				d.at++
				r, err := d.hex4()
				if err != nil {
					return "", err
				}
				if utf16.IsSurrogate(r) {
					r2 := utf8.RuneError
					if d.at+1 < len(d.data) && d.data[d.at] == '\\' && d.data[d.at+1] == 'u' {
						save := d.at
						d.at += 2
						next, err := d.hex4()
						if err != nil {
							return "", err
						}
						if pair := utf16.DecodeRune(r, next); pair != utf8.RuneError {
							r2 = pair
						} else {
							d.at = save
						}
					}
					r = r2
				}
				out = utf8.AppendRune(out, r)
			default:
				return "", d.fail("in string escape code")
			}
		case c < utf8.RuneSelf:
			out = append(out, c)
			d.at++
		default:
			r, size := utf8.DecodeRuneInString(d.data[d.at:])
			out = utf8.AppendRune(out, r)
			d.at += size
		}
	}
}

func (d *jsonDecoder) hex4() (rune, error) {
	var r rune
	for range 4 {
		if d.at >= len(d.data) {
			return 0, io.ErrUnexpectedEOF
		}
		c := d.data[d.at]
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, d.fail("in \\u hexadecimal character escape")
		}
		d.at++
	}
	return r, nil
}

// encodeJSON encodes v compactly, object names sorted, with no HTML
// escaping: what an Encoder with SetEscapeHTML(false) writes, less the
// newline.
func encodeJSON(v any) ([]byte, error) {
	return appendJSON(make([]byte, 0, 256), v)
}

func appendJSON(dst []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		return strconv.AppendBool(dst, v), nil
	case string:
		return appendString(dst, v), nil
	case *rawJSON:
		return append(dst, *v...), nil
	case json.Number:
		if v == "" {
			return append(dst, '0'), nil
		}
		if !validNumber(v) {
			return nil, fmt.Errorf("json: invalid number literal %q", v)
		}
		return append(dst, v...), nil
	case []any:
		dst = append(dst, '[')
		for i, item := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendJSON(dst, item); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	case map[string]any:
		names := make([]string, 0, len(v))
		for name := range v {
			names = append(names, name)
		}
		slices.Sort(names)
		dst = append(dst, '{')
		for i, name := range names {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, name)
			dst = append(dst, ':')
			var err error
			if dst, err = appendJSON(dst, v[name]); err != nil {
				return nil, err
			}
		}
		return append(dst, '}'), nil
	}
	// Not a plain value: encoding/json decides.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return append(dst, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...), nil
}

// validNumber reports whether n is a JSON number, as encoding/json checks
// a json.Number before writing it.
func validNumber(n json.Number) bool {
	d := jsonDecoder{data: string(n)}
	_, err := d.number()
	return err == nil && d.at == len(n)
}

// appendString quotes s as encoding/json does without HTML escaping:
// quote and backslash escaped, control characters as \b, \f, \n, \r, \t
// or \u00xx, U+2028 and U+2029 escaped, invalid UTF-8 as U+FFFD.
func appendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
