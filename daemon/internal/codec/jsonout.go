package codec

import (
	"cmp"
	"encoding/base64"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// appendPlainJSON appends m as protojson writes it with the answer's
// options (proto names), compact, when m is plain: messages whose JSON
// form is protojson's generic one, field by field (decision 0078). The
// bytes are protojson's, whitespace aside: fields in declaration order,
// map entries in protojson's key order, protojson's spelling of every
// number, string and enum.
//
// It reports false, having appended part of the answer, for a well-known
// type, a message that takes extensions, nesting deeper than
// maxPlainDepth, or a string that is not UTF-8; the caller then encodes
// the whole answer with protojson, which writes the first three its own
// way and refuses the last.
func appendPlainJSON(dst []byte, m protoreflect.Message) ([]byte, bool) {
	return writePooled(&jsonEncoders, dst, m)
}

// jsonEncoders keeps encoders with their Range callback bound.
var jsonEncoders = sync.Pool{New: func() any {
	e := &plainEncoder{}
	e.stack.bind(declarationOrder)
	return e
}}

type plainEncoder struct {
	out   []byte
	stack fieldStack
}

func (e *plainEncoder) write(dst []byte, m protoreflect.Message) ([]byte, bool) {
	e.out = dst
	ok := e.message(m, 0)
	out := e.out
	e.out = nil
	return out, ok
}

func (e *plainEncoder) scratch() int { return cap(e.stack.fields) }

// message writes the fields m has set, in declaration order, as protojson
// orders fields that are not extensions.
func (e *plainEncoder) message(m protoreflect.Message, depth int) bool {
	if depth >= maxPlainDepth || unusual(m.Descriptor()) {
		return false
	}
	e.out = append(e.out, '{')
	start := e.stack.push(m)
	ok := true
	for i := start; ok && i < len(e.stack.fields); i++ {
		f := e.stack.fields[i]
		if i > start {
			e.out = append(e.out, ',')
		}
		if ok = e.str(f.fd.TextName()); !ok {
			break
		}
		e.out = append(e.out, ':')
		switch {
		case f.fd.IsList():
			ok = e.list(f.v.List(), f.fd, depth)
		case f.fd.IsMap():
			ok = e.mapEntries(f.v.Map(), f.fd, depth)
		default:
			ok = e.singular(f.v, f.fd, depth)
		}
	}
	e.stack.pop(start)
	e.out = append(e.out, '}')
	return ok
}

func (e *plainEncoder) list(l protoreflect.List, fd protoreflect.FieldDescriptor, depth int) bool {
	e.out = append(e.out, '[')
	for i := range l.Len() {
		if i > 0 {
			e.out = append(e.out, ',')
		}
		if !e.singular(l.Get(i), fd, depth) {
			return false
		}
	}
	e.out = append(e.out, ']')
	return true
}

// mapEntries writes a map's entries in protojson's order: false before
// true, integers ascending, strings by their bytes.
func (e *plainEncoder) mapEntries(mm protoreflect.Map, fd protoreflect.FieldDescriptor, depth int) bool {
	type entry struct {
		k protoreflect.MapKey
		v protoreflect.Value
	}
	entries := make([]entry, 0, mm.Len())
	mm.Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
		entries = append(entries, entry{k, v})
		return true
	})
	var order func(a, b entry) int
	switch fd.MapKey().Kind() {
	case protoreflect.BoolKind:
		order = func(a, b entry) int {
			return cmp.Compare(boolRank(a.k.Bool()), boolRank(b.k.Bool()))
		}
	case protoreflect.StringKind:
		order = func(a, b entry) int { return cmp.Compare(a.k.String(), b.k.String()) }
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		order = func(a, b entry) int { return cmp.Compare(a.k.Uint(), b.k.Uint()) }
	default:
		order = func(a, b entry) int { return cmp.Compare(a.k.Int(), b.k.Int()) }
	}
	slices.SortFunc(entries, order)
	e.out = append(e.out, '{')
	vd := fd.MapValue()
	for i, en := range entries {
		if i > 0 {
			e.out = append(e.out, ',')
		}
		e.out = append(e.out, '"')
		switch k := en.k.Interface().(type) {
		case string:
			if !e.strBody(k) {
				return false
			}
		case bool:
			e.out = strconv.AppendBool(e.out, k)
		case int32, int64:
			e.out = strconv.AppendInt(e.out, en.k.Int(), 10)
		default:
			e.out = strconv.AppendUint(e.out, en.k.Uint(), 10)
		}
		e.out = append(e.out, '"', ':')
		if !e.singular(en.v, vd, depth) {
			return false
		}
	}
	e.out = append(e.out, '}')
	return true
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (e *plainEncoder) singular(v protoreflect.Value, fd protoreflect.FieldDescriptor, depth int) bool {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		e.out = strconv.AppendBool(e.out, v.Bool())
	case protoreflect.StringKind:
		return e.str(v.String())
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		e.out = strconv.AppendInt(e.out, v.Int(), 10)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		e.out = strconv.AppendUint(e.out, v.Uint(), 10)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		e.out = append(strconv.AppendInt(append(e.out, '"'), v.Int(), 10), '"')
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		e.out = append(strconv.AppendUint(append(e.out, '"'), v.Uint(), 10), '"')
	case protoreflect.FloatKind:
		e.out = appendJSONFloat(e.out, v.Float(), 32)
	case protoreflect.DoubleKind:
		e.out = appendJSONFloat(e.out, v.Float(), 64)
	case protoreflect.BytesKind:
		e.out = append(base64.StdEncoding.AppendEncode(append(e.out, '"'), v.Bytes()), '"')
	case protoreflect.EnumKind:
		if fd.Enum().FullName() == "google.protobuf.NullValue" {
			e.out = append(e.out, "null"...)
		} else if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			e.out = append(append(append(e.out, '"'), ev.Name()...), '"')
		} else {
			e.out = strconv.AppendInt(e.out, int64(v.Enum()), 10)
		}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return e.message(v.Message(), depth+1)
	default:
		return false
	}
	return true
}

// appendJSONFloat writes f as protojson does: NaN and the infinities as
// strings, the shortest decimal that reads back as f in bitSize bits, in
// exponent form below 1e-6 and from 1e21, with a one-digit negative
// exponent unpadded.
func appendJSONFloat(out []byte, f float64, bitSize int) []byte {
	switch {
	case math.IsNaN(f):
		return append(out, `"NaN"`...)
	case math.IsInf(f, +1):
		return append(out, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(out, `"-Infinity"`...)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 {
		if bitSize == 64 && (abs < 1e-6 || abs >= 1e21) ||
			bitSize == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	out = strconv.AppendFloat(out, f, format, -1, bitSize)
	if format == 'e' {
		n := len(out)
		if n >= 4 && out[n-4] == 'e' && out[n-3] == '-' && out[n-2] == '0' {
			out[n-2] = out[n-1]
			out = out[:n-1]
		}
	}
	return out
}

// str writes s as a JSON string, escaped as protojson escapes it; false
// when s is not UTF-8.
func (e *plainEncoder) str(s string) bool {
	e.out = append(e.out, '"')
	if !e.strBody(s) {
		return false
	}
	e.out = append(e.out, '"')
	return true
}

// strBody writes s's characters: a quote, a backslash and the control
// characters escaped (\b \f \n \r \t, others \u with lower-case hex),
// everything else as it is.
func (e *plainEncoder) strBody(s string) bool {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				return false
			}
			i += n
			continue
		}
		if c >= ' ' && c != '"' && c != '\\' {
			i++
			continue
		}
		e.out = append(e.out, s[start:i]...)
		e.out = append(e.out, '\\')
		switch c {
		case '"', '\\':
			e.out = append(e.out, c)
		case '\b':
			e.out = append(e.out, 'b')
		case '\f':
			e.out = append(e.out, 'f')
		case '\n':
			e.out = append(e.out, 'n')
		case '\r':
			e.out = append(e.out, 'r')
		case '\t':
			e.out = append(e.out, 't')
		default:
			e.out = append(e.out, 'u')
			e.out = append(e.out, "0000"[1+(bits.Len32(uint32(c))-1)/4:]...)
			e.out = strconv.AppendUint(e.out, uint64(c), 16)
		}
		i++
		start = i
	}
	e.out = append(e.out, s[start:]...)
	return true
}
