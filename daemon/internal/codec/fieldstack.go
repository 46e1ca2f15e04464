package codec

import (
	"cmp"
	"slices"
	"sync"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// fieldStack holds the set fields of the messages a plain encoder is
// inside: a message pushes its own onto the end, sorted into the order
// they are written in, writes them and pops them, so what a nested message
// pushes never disturbs its parent's. Its Range callback is bound once,
// when the encoder is made: a closure passed to Range, an interface
// method, would be allocated on every call.
type fieldStack struct {
	fields []setField
	rank   func(protoreflect.FieldDescriptor) uint64
	add    func(protoreflect.FieldDescriptor, protoreflect.Value) bool
}

type setField struct {
	fd   protoreflect.FieldDescriptor
	v    protoreflect.Value
	rank uint64
}

// bind makes s ready, ordering fields by rank; s must not move after.
func (s *fieldStack) bind(rank func(protoreflect.FieldDescriptor) uint64) {
	s.rank = rank
	s.add = func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		s.fields = append(s.fields, setField{fd, v, s.rank(fd)})
		return true
	}
}

// push adds the fields m has set, ordered, and returns where they start in
// s.fields. Index s.fields afresh while writing them: a nested message's
// push may move it.
func (s *fieldStack) push(m protoreflect.Message) int {
	start := len(s.fields)
	m.Range(s.add)
	slices.SortFunc(s.fields[start:], func(a, b setField) int { return cmp.Compare(a.rank, b.rank) })
	return start
}

// pop removes the fields pushed from start on, keeping no reference to a
// caller's values in the scratch an encoder returns to its pool.
func (s *fieldStack) pop(start int) {
	clear(s.fields[start:])
	s.fields = s.fields[:start]
}

// plainWriter is a plain encoder kept in a pool with its scratch.
type plainWriter interface {
	// write appends m to dst; false when m is not plain.
	write(dst []byte, m protoreflect.Message) ([]byte, bool)
	// scratch is the capacity of the scratch it would bring back.
	scratch() int
}

// writePooled writes m with an encoder from pool, and gives the encoder
// back unless its scratch grew past maxPooledScratch.
func writePooled(pool *sync.Pool, dst []byte, m protoreflect.Message) ([]byte, bool) {
	w := pool.Get().(plainWriter)
	out, ok := w.write(dst, m)
	if w.scratch() <= maxPooledScratch {
		pool.Put(w)
	}
	return out, ok
}

// maxPooledScratch bounds the scratch an encoder brings back to its pool:
// one message with thousands of fields set should not leave scratch that
// large behind for every later request.
const maxPooledScratch = 1024

// declarationOrder ranks a field by its place in its message, the order
// protojson writes fields that are not extensions in.
func declarationOrder(fd protoreflect.FieldDescriptor) uint64 { return uint64(fd.Index()) }
