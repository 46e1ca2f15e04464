package input

import (
	"encoding/base64"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// requestValues are the values a request holds, in the forms a rule message
// could quote them. A listed violation's message that quotes one is
// dropped (design 7.4 3b): a dynamic CEL message can format any field,
// hidden ones included, and the caller's answer must not carry the
// request back, however it was written.
//
// The rule, for every value at every depth — each field, each list element,
// each map key and each map value:
//   - strings and bytes (non-empty) are substrings: a message containing
//     one anywhere is dropped. Bytes count raw and as standard base64. A
//     string also counts in its Go-quoted form, which is how %q and
//     protovalidate's own formatting escape it.
//   - numbers and enum values (non-zero) are tokens: a message is dropped
//     when the value's text (an enum's name, and its number) appears not
//     joined to a letter, digit or '_' on either side, nor to a '.' that
//     joins it to another digit ("100" is in "at most 100." but not in
//     "1000", "v100" or "100.5"). A full stop after a number ends a
//     sentence; it does not hide the number.
//   - bools are not values: "true" and "false" say nothing a rule's id
//     does not.
//
// It drops more than it must — a request holding the string "a" drops
// nearly every message — because a missed echo leaks and a dropped message
// costs only words: the rule id stays.
type requestValues struct {
	substrings []string
	tokens     []string
}

func collectValues(m protoreflect.Message) *requestValues {
	v := &requestValues{}
	v.message(m)
	return v
}

func (v *requestValues) message(m protoreflect.Message) {
	m.Range(func(fd protoreflect.FieldDescriptor, val protoreflect.Value) bool {
		switch {
		case fd.IsList():
			list := val.List()
			for i := range list.Len() {
				v.value(fd, list.Get(i))
			}
		case fd.IsMap():
			val.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				v.value(fd.MapKey(), k.Value())
				v.value(fd.MapValue(), mv)
				return true
			})
		default:
			v.value(fd, val)
		}
		return true
	})
}

func (v *requestValues) value(fd protoreflect.FieldDescriptor, val protoreflect.Value) {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		v.message(val.Message())
	case protoreflect.StringKind:
		v.substring(val.String())
		if q := strconv.Quote(val.String()); q[1:len(q)-1] != val.String() {
			v.substring(q[1 : len(q)-1])
		}
	case protoreflect.BytesKind:
		if b := val.Bytes(); len(b) > 0 {
			v.substring(string(b))
			v.substring(base64.StdEncoding.EncodeToString(b))
		}
	case protoreflect.BoolKind:
	case protoreflect.EnumKind:
		n := val.Enum()
		if n == 0 {
			return
		}
		if ev := fd.Enum().Values().ByNumber(n); ev != nil {
			v.token(string(ev.Name()))
		}
		v.token(strconv.FormatInt(int64(n), 10))
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		if n := val.Int(); n != 0 {
			v.token(strconv.FormatInt(n, 10))
		}
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		if n := val.Uint(); n != 0 {
			v.token(strconv.FormatUint(n, 10))
		}
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		f := val.Float()
		if f == 0 || math.IsNaN(f) {
			return
		}
		// The forms a formatter might choose: shortest, plain decimal,
		// and for a float its float64 widening.
		bits := 64
		if fd.Kind() == protoreflect.FloatKind {
			bits = 32
		}
		for _, form := range []string{
			strconv.FormatFloat(f, 'g', -1, bits),
			strconv.FormatFloat(f, 'f', -1, bits),
			strconv.FormatFloat(f, 'e', -1, bits),
			strconv.FormatFloat(f, 'g', -1, 64),
		} {
			v.token(form)
		}
	}
}

func (v *requestValues) substring(s string) {
	if s != "" {
		v.substrings = append(v.substrings, s)
	}
}

func (v *requestValues) token(s string) { v.tokens = append(v.tokens, s) }

// quotedIn reports whether message quotes any of the values.
func (v *requestValues) quotedIn(message string) bool {
	for _, s := range v.substrings {
		if strings.Contains(message, s) {
			return true
		}
	}
	for _, t := range v.tokens {
		if containsToken(message, t) {
			return true
		}
	}
	return false
}

// containsToken reports whether tok appears in s with nothing joined to it
// on either side (see requestValues).
func containsToken(s, tok string) bool {
	if tok == "" {
		return false
	}
	for from := 0; ; {
		i := strings.Index(s[from:], tok)
		if i < 0 {
			return false
		}
		start, end := from+i, from+i+len(tok)
		if !joinedBefore(s, start) && !joinedAfter(s, end) {
			return true
		}
		_, size := utf8.DecodeRuneInString(s[start:])
		from = start + size
	}
}

func joinedBefore(s string, at int) bool {
	r, size := utf8.DecodeLastRuneInString(s[:at])
	if size == 0 {
		return false
	}
	if r == '.' {
		before, n := utf8.DecodeLastRuneInString(s[:at-size])
		return n > 0 && unicode.IsDigit(before)
	}
	return joins(r)
}

func joinedAfter(s string, at int) bool {
	r, size := utf8.DecodeRuneInString(s[at:])
	if size == 0 {
		return false
	}
	if r == '.' {
		after, n := utf8.DecodeRuneInString(s[at+size:])
		return n > 0 && unicode.IsDigit(after)
	}
	return joins(r)
}

func joins(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }
