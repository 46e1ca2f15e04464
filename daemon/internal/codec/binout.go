package codec

import (
	"math"
	"sync"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// appendPlainBinary appends m's binary encoding when m is plain: it and
// every message in it are outside google.protobuf, take no extensions,
// hold no group and no string that is not UTF-8, and nest less than
// maxPlainDepth deep (decision 0078). On a dynamic message protobuf-go
// takes its reflective path, which allocates for every message it writes;
// this writes the same wire form with protowire and allocates nothing but
// dst's growth.
//
// Fields are written in the order of protobuf-go's deterministic encoding
// (its LegacyFieldOrder: by number, the members of oneofs after the other
// fields), so a message without maps is the same bytes, which its tests
// hold it to. protobuf-go without Deterministic, the fallback, writes
// fields in Range order, which on a dynamic message is a map's; one fixed
// order costs a sort of the fields that are set and makes the hop's bytes
// depend only on the request. Map entries are written in Range order, as
// protobuf-go without Deterministic writes them: sorting keys would cost
// more than the hop needs. Unknown fields follow a message's known ones.
//
// It reports false, having appended part of the message, at the first
// thing that is not plain; the caller then encodes the whole message with
// protobuf-go from dst's original length. protobuf-go refuses invalid
// UTF-8 in a proto3 string and writes it in a proto2 one; that choice is
// left to it.
func appendPlainBinary(dst []byte, m protoreflect.Message) ([]byte, bool) {
	return writePooled(&binaryEncoders, dst, m)
}

// binaryEncoders keeps encoders with their Range callbacks bound (see
// fieldStack).
var binaryEncoders = sync.Pool{New: func() any {
	e := &binaryEncoder{}
	e.stack.bind(deterministicOrder)
	e.addEntry = e.appendEntry
	return e
}}

type binaryEncoder struct {
	out   []byte
	stack fieldStack
	// entries is a stack as stack is, of a map's entries.
	entries  []mapEntry
	addEntry func(protoreflect.MapKey, protoreflect.Value) bool
}

func (e *binaryEncoder) write(dst []byte, m protoreflect.Message) ([]byte, bool) {
	e.out = dst
	ok := e.message(m, 0)
	out := e.out
	e.out = nil
	return out, ok
}

func (e *binaryEncoder) scratch() int { return max(cap(e.stack.fields), cap(e.entries)) }

type mapEntry struct {
	k protoreflect.MapKey
	v protoreflect.Value
}

func (e *binaryEncoder) appendEntry(k protoreflect.MapKey, v protoreflect.Value) bool {
	e.entries = append(e.entries, mapEntry{k, v})
	return true
}

// deterministicOrder ranks fd as protobuf-go's deterministic encoding
// orders fields (its LegacyFieldOrder): fields outside a oneof first (a
// proto3 optional field's synthetic oneof does not count), then each
// oneof's in the oneof's declaration order, by number within each.
func deterministicOrder(fd protoreflect.FieldDescriptor) uint64 {
	group := uint64(0)
	if od := fd.ContainingOneof(); od != nil && !od.IsSynthetic() {
		group = 1 + uint64(od.Index())
	}
	return group<<32 | uint64(uint32(fd.Number()))
}

func (e *binaryEncoder) message(m protoreflect.Message, depth int) bool {
	if depth >= maxPlainDepth || unusual(m.Descriptor()) {
		return false
	}
	start := e.stack.push(m)
	ok := true
	for i := start; ok && i < len(e.stack.fields); i++ {
		f := e.stack.fields[i]
		switch {
		case f.fd.IsList():
			ok = e.list(f.v.List(), f.fd, depth)
		case f.fd.IsMap():
			ok = e.mapEntries(f.v.Map(), f.fd, depth)
		default:
			ok = e.field(f.v, f.fd, depth)
		}
	}
	e.stack.pop(start)
	if ok {
		e.out = append(e.out, m.GetUnknown()...)
	}
	return ok
}

func (e *binaryEncoder) list(l protoreflect.List, fd protoreflect.FieldDescriptor, depth int) bool {
	if fd.IsPacked() && l.Len() > 0 {
		e.out = protowire.AppendTag(e.out, fd.Number(), protowire.BytesType)
		at := e.reserveLength()
		for i := range l.Len() {
			e.scalar(l.Get(i), fd.Kind()) // packed lists are of numbers, which always write
		}
		e.finishLength(at)
		return true
	}
	for i := range l.Len() {
		if !e.field(l.Get(i), fd, depth) {
			return false
		}
	}
	return true
}

// mapEntries writes each entry as protobuf-go does: a message of the key
// (field 1) and the value (field 2), both written even when zero.
func (e *binaryEncoder) mapEntries(mm protoreflect.Map, fd protoreflect.FieldDescriptor, depth int) bool {
	start := len(e.entries)
	mm.Range(e.addEntry)
	kd, vd := fd.MapKey(), fd.MapValue()
	ok := true
	for i := start; ok && i < len(e.entries); i++ {
		en := e.entries[i]
		e.out = protowire.AppendTag(e.out, fd.Number(), protowire.BytesType)
		at := e.reserveLength()
		ok = e.field(en.k.Value(), kd, depth) && e.field(en.v, vd, depth)
		e.finishLength(at)
	}
	clear(e.entries[start:])
	e.entries = e.entries[:start]
	return ok
}

// field writes one value of fd with its tag: a singular field, a list's
// element, a map entry's key or value.
func (e *binaryEncoder) field(v protoreflect.Value, fd protoreflect.FieldDescriptor, depth int) bool {
	switch k := fd.Kind(); k {
	case protoreflect.MessageKind:
		e.out = protowire.AppendTag(e.out, fd.Number(), protowire.BytesType)
		at := e.reserveLength()
		if !e.message(v.Message(), depth+1) {
			return false
		}
		e.finishLength(at)
	case protoreflect.GroupKind:
		return false
	case protoreflect.StringKind:
		s := v.String()
		if !utf8.ValidString(s) {
			return false
		}
		e.out = protowire.AppendTag(e.out, fd.Number(), protowire.BytesType)
		e.out = protowire.AppendString(e.out, s)
	case protoreflect.BytesKind:
		e.out = protowire.AppendTag(e.out, fd.Number(), protowire.BytesType)
		e.out = protowire.AppendBytes(e.out, v.Bytes())
	default:
		e.out = protowire.AppendTag(e.out, fd.Number(), numberWireType(k))
		e.scalar(v, k)
	}
	return true
}

// scalar writes a number of kind k without a tag, as protobuf-go does:
// int32 and enums sign-extended to ten bytes when negative, sint32 and
// sint64 zigzag, the fixed kinds and floats little-endian.
func (e *binaryEncoder) scalar(v protoreflect.Value, k protoreflect.Kind) {
	switch k {
	case protoreflect.BoolKind:
		e.out = protowire.AppendVarint(e.out, protowire.EncodeBool(v.Bool()))
	case protoreflect.EnumKind:
		e.out = protowire.AppendVarint(e.out, uint64(v.Enum()))
	case protoreflect.Int32Kind:
		e.out = protowire.AppendVarint(e.out, uint64(int32(v.Int())))
	case protoreflect.Sint32Kind:
		e.out = protowire.AppendVarint(e.out, protowire.EncodeZigZag(int64(int32(v.Int()))))
	case protoreflect.Uint32Kind:
		e.out = protowire.AppendVarint(e.out, uint64(uint32(v.Uint())))
	case protoreflect.Int64Kind:
		e.out = protowire.AppendVarint(e.out, uint64(v.Int()))
	case protoreflect.Sint64Kind:
		e.out = protowire.AppendVarint(e.out, protowire.EncodeZigZag(v.Int()))
	case protoreflect.Uint64Kind:
		e.out = protowire.AppendVarint(e.out, v.Uint())
	case protoreflect.Sfixed32Kind:
		e.out = protowire.AppendFixed32(e.out, uint32(v.Int()))
	case protoreflect.Fixed32Kind:
		e.out = protowire.AppendFixed32(e.out, uint32(v.Uint()))
	case protoreflect.FloatKind:
		e.out = protowire.AppendFixed32(e.out, math.Float32bits(float32(v.Float())))
	case protoreflect.Sfixed64Kind:
		e.out = protowire.AppendFixed64(e.out, uint64(v.Int()))
	case protoreflect.Fixed64Kind:
		e.out = protowire.AppendFixed64(e.out, v.Uint())
	case protoreflect.DoubleKind:
		e.out = protowire.AppendFixed64(e.out, math.Float64bits(v.Float()))
	}
}

func numberWireType(k protoreflect.Kind) protowire.Type {
	switch k {
	case protoreflect.Sfixed32Kind, protoreflect.Fixed32Kind, protoreflect.FloatKind:
		return protowire.Fixed32Type
	case protoreflect.Sfixed64Kind, protoreflect.Fixed64Kind, protoreflect.DoubleKind:
		return protowire.Fixed64Type
	}
	return protowire.VarintType
}

// reserveLength sets aside one byte for the length of what follows, the
// length of most nested messages, and returns where it is.
func (e *binaryEncoder) reserveLength() int {
	e.out = append(e.out, 0)
	return len(e.out) - 1
}

// finishLength writes the length of what follows at into the byte
// reserveLength set aside, moving it up when the length needs more bytes.
func (e *binaryEncoder) finishLength(at int) {
	n := len(e.out) - at - 1
	size := protowire.SizeVarint(uint64(n))
	if size > 1 {
		for range size - 1 {
			e.out = append(e.out, 0)
		}
		copy(e.out[at+size:], e.out[at+1:at+1+n])
	}
	protowire.AppendVarint(e.out[:at], uint64(n))
}
