package compile

import "unicode/utf8"

// A schema fragment written by encodeJSON is canonical: compact, object
// names sorted and unique, strings escaped only where encodeJSON escapes
// them. Decoding a canonical fragment and encoding it again gives its own
// bytes, and so does every value inside it, so assembly places a canonical
// value it does not change as its bytes (rawJSON) instead of as a tree it
// would decode and encode again. Anything not plainly canonical is
// decoded as before, so what assembly writes and refuses does not change.

// rawJSON is canonical JSON text, written as it is. Values hold it by
// pointer (*rawJSON), so placing one in an any allocates nothing; the
// pointers are into slices (rawValues) never changed once appended to.
type rawJSON string

// rawValues hands out *rawJSON from one backing array: an append that
// outgrows it moves on to another, and what was handed out stays valid.
type rawValues []rawJSON

func (r *rawValues) place(s string) *rawJSON {
	*r = append(*r, rawJSON(s))
	return &(*r)[len(*r)-1]
}

// canonical reports whether s is one JSON value that encodeJSON of
// decodeJSONString(s) gives back byte for byte. It answers false for
// anything it cannot tell quickly (white space, escapes, U+2028 and
// U+2029, the nesting limit), which then takes the decoding path.
func canonical(s string) bool {
	c := canonicalScanner{data: s}
	return c.value(0) && c.at == len(s)
}

type canonicalScanner struct {
	data string
	at   int
}

func (c *canonicalScanner) peek() byte {
	if c.at < len(c.data) {
		return c.data[c.at]
	}
	return 0
}

func (c *canonicalScanner) value(depth int) bool {
	switch b := c.peek(); {
	case b == '{':
		if depth+1 >= maxDepth {
			return false
		}
		c.at++
		if c.peek() == '}' {
			c.at++
			return true
		}
		last, first := "", true
		for {
			name, ok := c.string()
			if !ok || !first && name <= last {
				return false
			}
			last, first = name, false
			if c.peek() != ':' {
				return false
			}
			c.at++
			if !c.value(depth + 1) {
				return false
			}
			switch c.peek() {
			case ',':
				c.at++
			case '}':
				c.at++
				return true
			default:
				return false
			}
		}
	case b == '[':
		if depth+1 >= maxDepth {
			return false
		}
		c.at++
		if c.peek() == ']' {
			c.at++
			return true
		}
		for {
			if !c.value(depth + 1) {
				return false
			}
			switch c.peek() {
			case ',':
				c.at++
			case ']':
				c.at++
				return true
			default:
				return false
			}
		}
	case b == '"':
		_, ok := c.string()
		return ok
	case b == '-' || b >= '0' && b <= '9':
		d := jsonDecoder{data: c.data, at: c.at}
		if _, err := d.number(); err != nil {
			return false
		}
		c.at = d.at
		return true
	case b == 't':
		return c.literal("true")
	case b == 'f':
		return c.literal("false")
	case b == 'n':
		return c.literal("null")
	}
	return false
}

func (c *canonicalScanner) literal(word string) bool {
	if len(c.data)-c.at < len(word) || c.data[c.at:c.at+len(word)] != word {
		return false
	}
	c.at += len(word)
	return true
}

// string scans a string encodeJSON writes as it is: no escape, no control
// character, valid UTF-8 without U+2028 or U+2029. It answers the
// string's content, which is also its decoded value.
func (c *canonicalScanner) string() (string, bool) {
	if c.peek() != '"' {
		return "", false
	}
	c.at++
	start := c.at
	for c.at < len(c.data) {
		b := c.data[c.at]
		switch {
		case b == '"':
			c.at++
			return c.data[start : c.at-1], true
		case b == '\\' || b < 0x20:
			return "", false
		case b < utf8.RuneSelf:
			c.at++
		default:
			r, size := utf8.DecodeRuneInString(c.data[c.at:])
			if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
				return "", false
			}
			c.at += size
		}
	}
	return "", false
}

// shallowObject is the canonical object s as a map whose values are their
// own bytes (rawJSON), for assembly to add to; ok is false when s is not a
// canonical object.
func shallowObject(s string) (map[string]any, bool) {
	if len(s) == 0 || s[0] != '{' || !canonical(s) {
		return nil, false
	}
	object := make(map[string]any, 8)
	values := make(rawValues, 0, 8)
	c := canonicalScanner{data: s, at: 1}
	if c.peek() == '}' {
		return object, true
	}
	for {
		name, _ := c.string()
		c.at++ // ':'
		start := c.at
		c.value(1)
		object[name] = values.place(s[start:c.at])
		if c.peek() == '}' {
			return object, true
		}
		c.at++ // ','
	}
}

// expand replaces object[key], when it is rawJSON, by its decoded value,
// so assembly can change it.
func expand(object map[string]any, key string) error {
	raw, ok := object[key].(*rawJSON)
	if !ok {
		return nil
	}
	if sub, ok := shallowObject(string(*raw)); ok {
		object[key] = sub
		return nil
	}
	v, err := decodeJSONString(string(*raw))
	if err != nil {
		return err
	}
	object[key] = v
	return nil
}
