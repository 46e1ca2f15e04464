package codec

import (
	"encoding/base64"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// decodePlainJSON decodes body into msg, a new message, when the body is
// plain: JSON whose every token protojson reads one way only, into fields
// of kinds whose JSON form is protojson's generic one (decision 0078). It
// makes the calls on msg that protojson makes for the same bytes, in the
// same order, so what it accepts decodes to the message protojson's decode
// would be.
//
// It reports false at the first thing outside that subset: an unknown or
// repeated field or map key, null, a number with a fraction or an
// exponent, an escape of a surrogate, invalid UTF-8, a well-known type, a
// group, a message that takes extensions, nesting deeper than
// maxPlainDepth, anything after the object. It decides nothing then:
// msg may be partly set, and the caller decodes the body again, with
// protojson, into a new message; protojson accepts or refuses it and says
// why.
func decodePlainJSON(body []byte, msg protoreflect.Message) bool {
	d := plainDecoder{in: body}
	if !d.message(msg, 0) {
		return false
	}
	d.space()
	return d.pos == len(d.in)
}

// maxPlainDepth is how deep plain JSON nests messages; deeper bodies are
// protojson's (whose limit is far larger).
const maxPlainDepth = 32

type plainDecoder struct {
	in  []byte
	pos int
}

func (d *plainDecoder) space() {
	for d.pos < len(d.in) {
		switch d.in[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// next skips whitespace and reports whether the next byte is c, taking it
// when it is.
func (d *plainDecoder) next(c byte) bool {
	d.space()
	if d.pos < len(d.in) && d.in[d.pos] == c {
		d.pos++
		return true
	}
	return false
}

func (d *plainDecoder) peek() byte {
	d.space()
	if d.pos < len(d.in) {
		return d.in[d.pos]
	}
	return 0
}

// unusual reports whether protojson reads md other than field by field:
// a well-known type has a JSON form of its own, and a message that takes
// extensions may be sent one by its bracketed name (or be a MessageSet,
// which protojson refuses).
func unusual(md protoreflect.MessageDescriptor) bool {
	return md.ParentFile().Package() == "google.protobuf" || md.ExtensionRanges().Len() > 0
}

func (d *plainDecoder) message(m protoreflect.Message, depth int) bool {
	md := m.Descriptor()
	if depth >= maxPlainDepth || unusual(md) || !d.next('{') {
		return false
	}
	fields := md.Fields()
	if fields.Len() > 64 || md.Oneofs().Len() > 64 {
		return false
	}
	var seen, seenOneofs uint64
	if d.next('}') {
		return true
	}
	for {
		key, ok := d.key()
		if !ok {
			return false
		}
		fd := fields.ByJSONName(key)
		if fd == nil {
			fd = fields.ByTextName(key)
		}
		if fd == nil || !d.next(':') {
			return false
		}
		bit := uint64(1) << fd.Index()
		if seen&bit != 0 || d.peek() == 'n' {
			return false // a repeated field, or null: protojson's to judge
		}
		seen |= bit
		switch {
		case fd.IsList():
			if !d.list(m.Mutable(fd).List(), fd, depth) {
				return false
			}
		case fd.IsMap():
			if !d.mapEntries(m.Mutable(fd).Map(), fd, depth) {
				return false
			}
		default:
			if od := fd.ContainingOneof(); od != nil {
				obit := uint64(1) << od.Index()
				if seenOneofs&obit != 0 {
					return false
				}
				seenOneofs |= obit
			}
			v, ok := d.singular(m, fd, depth)
			if !ok {
				return false
			}
			m.Set(fd, v)
		}
		if d.next(',') {
			continue
		}
		return d.next('}')
	}
}

// key reads an object's key: a string without escapes or bytes outside
// printable ASCII, which every field name and plain map key is. The
// string shares body's memory and lives only as long as the lookup it is
// read for.
func (d *plainDecoder) key() (string, bool) {
	if !d.next('"') {
		return "", false
	}
	start := d.pos
	for d.pos < len(d.in) {
		c := d.in[d.pos]
		switch {
		case c == '"':
			k := d.in[start:d.pos]
			d.pos++
			return unsafe.String(unsafe.SliceData(k), len(k)), true
		case c < ' ' || c == '\\' || c >= utf8.RuneSelf:
			return "", false
		}
		d.pos++
	}
	return "", false
}

func (d *plainDecoder) list(l protoreflect.List, fd protoreflect.FieldDescriptor, depth int) bool {
	if !d.next('[') {
		return false
	}
	if d.next(']') {
		return true
	}
	for {
		if fd.Message() != nil {
			v := l.NewElement()
			if !d.message(v.Message(), depth+1) {
				return false
			}
			l.Append(v)
		} else {
			v, ok := d.scalar(fd)
			if !ok {
				return false
			}
			l.Append(v)
		}
		if d.next(',') {
			continue
		}
		return d.next(']')
	}
}

func (d *plainDecoder) mapEntries(mm protoreflect.Map, fd protoreflect.FieldDescriptor, depth int) bool {
	if !d.next('{') {
		return false
	}
	if d.next('}') {
		return true
	}
	kd, vd := fd.MapKey(), fd.MapValue()
	for {
		raw, ok := d.key()
		if !ok || !d.next(':') || d.peek() == 'n' {
			return false
		}
		k, ok := mapKey(raw, kd)
		if !ok || mm.Has(k) {
			return false
		}
		var v protoreflect.Value
		if vd.Message() != nil {
			v = mm.NewValue()
			if !d.message(v.Message(), depth+1) {
				return false
			}
		} else if v, ok = d.scalar(vd); !ok {
			return false
		}
		mm.Set(k, v)
		if d.next(',') {
			continue
		}
		return d.next('}')
	}
}

// mapKey is raw as a key of kd's kind. raw shares the body's memory, so a
// string key is copied.
func mapKey(raw string, kd protoreflect.FieldDescriptor) (protoreflect.MapKey, bool) {
	switch kd.Kind() {
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(strings.Clone(raw)).MapKey(), true
	case protoreflect.BoolKind:
		switch raw {
		case "true":
			return protoreflect.ValueOfBool(true).MapKey(), true
		case "false":
			return protoreflect.ValueOfBool(false).MapKey(), true
		}
		return protoreflect.MapKey{}, false
	}
	if !plainInteger(raw) {
		return protoreflect.MapKey{}, false
	}
	v, ok := integer(raw, kd.Kind())
	return v.MapKey(), ok
}

func (d *plainDecoder) singular(m protoreflect.Message, fd protoreflect.FieldDescriptor, depth int) (protoreflect.Value, bool) {
	if fd.Message() == nil {
		return d.scalar(fd)
	}
	v := m.NewField(fd)
	return v, d.message(v.Message(), depth+1)
}

// scalar reads one value of fd's scalar kind in the form protojson writes
// it: a bool; an integer literal, or for any integer kind the same inside
// a string; a number for a float; a string; base64 in a string; an enum
// value's name, or an int32.
func (d *plainDecoder) scalar(fd protoreflect.FieldDescriptor) (protoreflect.Value, bool) {
	switch c := d.peek(); {
	case c == '"':
		s, ok := d.str()
		if !ok {
			return protoreflect.Value{}, false
		}
		return fromString(s, fd)
	case c == 't' || c == 'f':
		if fd.Kind() != protoreflect.BoolKind {
			return protoreflect.Value{}, false
		}
		for _, lit := range [...]string{"true", "false"} {
			if d.literal(lit) {
				return protoreflect.ValueOfBool(lit == "true"), true
			}
		}
	case c == '-' || ('0' <= c && c <= '9'):
		lit, integral, ok := d.number()
		if !ok {
			return protoreflect.Value{}, false
		}
		return fromNumber(lit, integral, fd)
	}
	return protoreflect.Value{}, false
}

// literal takes lit when it is next and a delimiter follows it.
func (d *plainDecoder) literal(lit string) bool {
	end := d.pos + len(lit)
	if end > len(d.in) || string(d.in[d.pos:end]) != lit || (end < len(d.in) && notDelimiter(d.in[end])) {
		return false
	}
	d.pos = end
	return true
}

// notDelimiter is a byte protojson reads as part of the literal or number
// before it.
func notDelimiter(c byte) bool {
	return c == '-' || c == '+' || c == '.' || c == '_' ||
		('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
}

// number reads a JSON number, and says whether it is a plain integer: no
// fraction, no exponent.
func (d *plainDecoder) number() (lit string, integral, ok bool) {
	start, in := d.pos, d.in
	i := start
	if i < len(in) && in[i] == '-' {
		i++
	}
	switch {
	case i < len(in) && in[i] == '0':
		i++
	case i < len(in) && '1' <= in[i] && in[i] <= '9':
		for i < len(in) && '0' <= in[i] && in[i] <= '9' {
			i++
		}
	default:
		return "", false, false
	}
	integral = true
	if i < len(in) && in[i] == '.' {
		integral = false
		i++
		if !digitsAt(in, &i) {
			return "", false, false
		}
	}
	if i < len(in) && (in[i] == 'e' || in[i] == 'E') {
		integral = false
		i++
		if i < len(in) && (in[i] == '+' || in[i] == '-') {
			i++
		}
		if !digitsAt(in, &i) {
			return "", false, false
		}
	}
	if i < len(in) && notDelimiter(in[i]) {
		return "", false, false
	}
	d.pos = i
	b := in[start:i]
	return unsafe.String(unsafe.SliceData(b), len(b)), integral, true
}

func digitsAt(in []byte, i *int) bool {
	start := *i
	for *i < len(in) && '0' <= in[*i] && in[*i] <= '9' {
		*i++
	}
	return *i > start
}

// plainInteger reports whether s is a JSON integer literal without
// fraction or exponent: -?(0|[1-9][0-9]*).
func plainInteger(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" || (s[0] == '0' && len(s) > 1) {
		return false
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func fromNumber(lit string, integral bool, fd protoreflect.FieldDescriptor) (protoreflect.Value, bool) {
	switch k := fd.Kind(); k {
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		bits := 64
		if k == protoreflect.FloatKind {
			bits = 32
		}
		f, err := strconv.ParseFloat(lit, bits)
		if err != nil {
			return protoreflect.Value{}, false
		}
		if bits == 32 {
			return protoreflect.ValueOfFloat32(float32(f)), true
		}
		return protoreflect.ValueOfFloat64(f), true
	case protoreflect.EnumKind:
		if !integral {
			return protoreflect.Value{}, false
		}
		n, err := strconv.ParseInt(lit, 10, 32)
		return protoreflect.ValueOfEnum(protoreflect.EnumNumber(n)), err == nil
	}
	if !integral {
		return protoreflect.Value{}, false
	}
	return integer(lit, fd.Kind())
}

// integer is lit, a plain integer literal, as a value of an integer kind;
// false for another kind or a value out of its range.
func integer(lit string, k protoreflect.Kind) (protoreflect.Value, bool) {
	switch k {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		n, err := strconv.ParseInt(lit, 10, 32)
		return protoreflect.ValueOfInt32(int32(n)), err == nil
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		n, err := strconv.ParseInt(lit, 10, 64)
		return protoreflect.ValueOfInt64(n), err == nil
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		n, err := strconv.ParseUint(lit, 10, 32)
		return protoreflect.ValueOfUint32(uint32(n)), err == nil
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		n, err := strconv.ParseUint(lit, 10, 64)
		return protoreflect.ValueOfUint64(n), err == nil
	}
	return protoreflect.Value{}, false
}

func fromString(s string, fd protoreflect.FieldDescriptor) (protoreflect.Value, bool) {
	switch k := fd.Kind(); k {
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(s), true
	case protoreflect.BytesKind:
		// protojson's choice of alphabet and padding, made the same way.
		enc := base64.StdEncoding
		if strings.ContainsAny(s, "-_") {
			enc = base64.URLEncoding
		}
		if len(s)%4 != 0 {
			enc = enc.WithPadding(base64.NoPadding)
		}
		b, err := enc.DecodeString(s)
		return protoreflect.ValueOfBytes(b), err == nil
	case protoreflect.EnumKind:
		if fd.Enum().FullName().Parent() == "google.protobuf" {
			return protoreflect.Value{}, false // NullValue reads null
		}
		ev := fd.Enum().Values().ByName(protoreflect.Name(s))
		if ev == nil {
			return protoreflect.Value{}, false
		}
		return protoreflect.ValueOfEnum(ev.Number()), true
	case protoreflect.BoolKind, protoreflect.FloatKind, protoreflect.DoubleKind:
		return protoreflect.Value{}, false // "NaN" and the like: protojson's
	}
	if !plainInteger(s) {
		return protoreflect.Value{}, false
	}
	return integer(s, fd.Kind())
}

// str reads a string value: valid UTF-8 without control characters, its
// escapes any of JSON's but a surrogate's. Without escapes the string is
// one copy of its bytes.
func (d *plainDecoder) str() (string, bool) {
	if !d.next('"') {
		return "", false
	}
	start := d.pos
	var out []byte // nil until the first escape
	for d.pos < len(d.in) {
		c := d.in[d.pos]
		switch {
		case c == '"':
			if out == nil {
				s := string(d.in[start:d.pos])
				d.pos++
				return s, true
			}
			d.pos++
			return string(out), true
		case c < ' ':
			return "", false
		case c == '\\':
			if out == nil {
				out = append(make([]byte, 0, d.pos-start+16), d.in[start:d.pos]...)
			}
			var ok bool
			if out, ok = d.escape(out); !ok {
				return "", false
			}
		case c < utf8.RuneSelf:
			if out != nil {
				out = append(out, c)
			}
			d.pos++
		default:
			r, n := utf8.DecodeRune(d.in[d.pos:])
			if r == utf8.RuneError && n == 1 {
				return "", false
			}
			if out != nil {
				out = append(out, d.in[d.pos:d.pos+n]...)
			}
			d.pos += n
		}
	}
	return "", false
}

// escape appends the character of the escape at d.pos to out.
func (d *plainDecoder) escape(out []byte) ([]byte, bool) {
	if d.pos+1 >= len(d.in) {
		return out, false
	}
	c := d.in[d.pos+1]
	d.pos += 2
	switch c {
	case '"', '\\', '/':
		return append(out, c), true
	case 'b':
		return append(out, '\b'), true
	case 'f':
		return append(out, '\f'), true
	case 'n':
		return append(out, '\n'), true
	case 'r':
		return append(out, '\r'), true
	case 't':
		return append(out, '\t'), true
	case 'u':
		if d.pos+4 > len(d.in) {
			return out, false
		}
		v, err := strconv.ParseUint(string(d.in[d.pos:d.pos+4]), 16, 16)
		if err != nil || utf16.IsSurrogate(rune(v)) {
			return out, false
		}
		d.pos += 4
		return utf8.AppendRune(out, rune(v)), true
	}
	return out, false
}
