package redact

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"slices"

	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// planDomain opens every encoding planAddress hashes, so that a future
// encoding can be told apart by its first bytes.
const planDomain = "garm.redaction_plan.v1\n"

// planAddress is the ledger's redaction_plan (design 3.7, 7.7): 16 lowercase
// hex digits, the first 8 bytes of SHA-256 over the encoding below, or ""
// when nothing is denied — an empty column says "nothing was withheld"
// without a constant every reader would have to know.
//
// The encoding is length-prefixed throughout, so no two different plans
// encode alike. uvarint is encoding/binary's unsigned varint, and
// str(b) = uvarint(len(b)) b.
//
//	planDomain
//	for each denied rule, in plan order:
//	    str(path)  uvarint(read)  uvarint(#compartments)  str(compartment)…  msg(on_deny)
//
// msg(m) is uvarint(the number of populated fields), then for each populated
// field in ascending field-number order uvarint(number) and value(field),
// then str(m's unknown bytes). value is by kind: bool as uvarint 0 or 1;
// enums and signed integers as the uvarint of their zigzag encoding;
// unsigned integers as uvarint; floats as the 8 big-endian bytes of their
// float64 bits; strings and bytes as str; messages as msg; a list as
// uvarint(length) and each element's value; a map as uvarint(length) and
// value(key) value(value) per entry, ordered by the bytes of value(key).
//
// The labels are the read clearance and the compartment names (never their
// bit numbers, which do not leave the process); the write clearance is not
// part of what a caller has withheld from an answer.
func planAddress(denied []*planv1.FieldRule) string {
	if len(denied) == 0 {
		return ""
	}
	b := []byte(planDomain)
	for _, rule := range denied {
		b = appendString(b, rule.GetPath())
		b = binary.AppendUvarint(b, uint64(rule.GetRead()))
		b = binary.AppendUvarint(b, uint64(len(rule.GetCompartments())))
		for _, c := range rule.GetCompartments() {
			b = appendString(b, c)
		}
		b = appendMessage(b, rule.GetOnDeny().ProtoReflect())
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendBytes(b, s []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendMessage(b []byte, m protoreflect.Message) []byte {
	fields := m.Descriptor().Fields()
	var set []protoreflect.FieldDescriptor
	for i := range fields.Len() {
		if fd := fields.Get(i); m.Has(fd) {
			set = append(set, fd)
		}
	}
	slices.SortFunc(set, func(x, y protoreflect.FieldDescriptor) int { return int(x.Number()) - int(y.Number()) })
	b = binary.AppendUvarint(b, uint64(len(set)))
	for _, fd := range set {
		b = binary.AppendUvarint(b, uint64(fd.Number()))
		b = appendField(b, fd, m.Get(fd))
	}
	return appendBytes(b, m.GetUnknown())
}

func appendField(b []byte, fd protoreflect.FieldDescriptor, v protoreflect.Value) []byte {
	switch {
	case fd.IsList():
		list := v.List()
		b = binary.AppendUvarint(b, uint64(list.Len()))
		for i := range list.Len() {
			b = appendValue(b, fd, list.Get(i))
		}
		return b
	case fd.IsMap():
		type entry struct{ key, value []byte }
		var entries []entry
		v.Map().Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
			entries = append(entries, entry{
				key:   appendValue(nil, fd.MapKey(), k.Value()),
				value: appendValue(nil, fd.MapValue(), v),
			})
			return true
		})
		slices.SortFunc(entries, func(x, y entry) int { return bytes.Compare(x.key, y.key) })
		b = binary.AppendUvarint(b, uint64(len(entries)))
		for _, e := range entries {
			b = append(append(b, e.key...), e.value...)
		}
		return b
	}
	return appendValue(b, fd, v)
}

// appendValue encodes one scalar or message value of fd's kind.
func appendValue(b []byte, fd protoreflect.FieldDescriptor, v protoreflect.Value) []byte {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		if v.Bool() {
			return binary.AppendUvarint(b, 1)
		}
		return binary.AppendUvarint(b, 0)
	case protoreflect.EnumKind:
		return binary.AppendVarint(b, int64(v.Enum()))
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return binary.AppendVarint(b, v.Int())
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return binary.AppendUvarint(b, v.Uint())
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return binary.BigEndian.AppendUint64(b, math.Float64bits(v.Float()))
	case protoreflect.StringKind:
		return appendString(b, v.String())
	case protoreflect.BytesKind:
		return appendBytes(b, v.Bytes())
	default: // MessageKind, GroupKind
		return appendMessage(b, v.Message())
	}
}
