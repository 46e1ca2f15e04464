package compile

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"slices"
	"strconv"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// DescriptorHash is the wire-shape identity of a package's tools: 64
// lowercase hex characters of SHA-256 over a canonical text of every message
// the tools send or receive. For each tool in order it visits the input, then
// the output message; a visit writes "message <full name>\n", then
// "field <number> <name> <cardinality> <kind>\n" for each field by number,
// then visits the message-typed fields' messages in that order. A message is
// visited once. Options and comments never enter it, so a policy change never
// moves it and a wire change always does.
func DescriptorHash(tools []*Tool) string {
	h := sha256.New()
	w := &shapeWriter{h: h, seen: map[protoreflect.FullName]bool{}, line: make([]byte, 0, 128)}
	for _, t := range tools {
		w.visit(t.Desc.Input())
		w.visit(t.Desc.Output())
	}
	return hex.EncodeToString(h.Sum(nil))
}

type shapeWriter struct {
	h    hash.Hash
	seen map[protoreflect.FullName]bool
	// line is reused for each line written: the hash of a large catalogue
	// is computed every time it is read, and formatting dominated it.
	line []byte
}

func (w *shapeWriter) visit(md protoreflect.MessageDescriptor) {
	if w.seen[md.FullName()] {
		return
	}
	w.seen[md.FullName()] = true
	w.line = append(append(append(w.line[:0], "message "...), md.FullName()...), '\n')
	fields := fieldsByNumber(md)
	for _, fd := range fields {
		w.line = append(w.line, "field "...)
		w.line = strconv.AppendInt(w.line, int64(fd.Number()), 10)
		w.line = append(append(w.line, ' '), fd.Name()...)
		w.line = append(append(w.line, ' '), fd.Cardinality().String()...)
		w.line = append(append(w.line, ' '), fd.Kind().String()...)
		w.line = append(w.line, '\n')
	}
	w.h.Write(w.line)
	for _, fd := range fields {
		if fd.Message() != nil {
			w.visit(fd.Message())
		}
	}
}

// fieldsByNumber returns md's fields sorted by field number.
func fieldsByNumber(md protoreflect.MessageDescriptor) []protoreflect.FieldDescriptor {
	list := md.Fields()
	fields := make([]protoreflect.FieldDescriptor, list.Len())
	for i := range fields {
		fields[i] = list.Get(i)
	}
	slices.SortFunc(fields, func(a, b protoreflect.FieldDescriptor) int { return int(a.Number()) - int(b.Number()) })
	return fields
}
