package codec

import (
	"sync"
	"sync/atomic"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// checkRequired is the decoder's own check that msg, of md, sets every
// required field, made only when md reaches one: most contracts have none,
// and on a dynamic message the check walks the message and allocates.
func checkRequired(md protoreflect.MessageDescriptor, msg protoreflect.Message) error {
	if !reachesRequired(md) {
		return nil
	}
	return proto.CheckInitialized(msg.Interface())
}

// maxRequiredMemo bounds the memo of reachesRequired: descriptors of
// generations no longer served are dropped with the rest when it fills.
const maxRequiredMemo = 1 << 14

var (
	requiredMemo     sync.Map // protoreflect.MessageDescriptor → bool
	requiredMemoSize atomic.Int64
)

// reachesRequired says whether a message of md can hold a required field
// unset: one of its own, or of a message field's type, at any depth (a
// message that takes extensions is taken to, as one may). The
// answer depends on the immutable descriptor alone, so it is remembered.
func reachesRequired(md protoreflect.MessageDescriptor) bool {
	if v, ok := requiredMemo.Load(md); ok {
		return v.(bool)
	}
	reaches := walkRequired(md, map[protoreflect.FullName]bool{})
	if requiredMemoSize.Add(1) > maxRequiredMemo {
		requiredMemo.Clear()
		requiredMemoSize.Store(1)
	}
	requiredMemo.Store(md, reaches)
	return reaches
}

func walkRequired(md protoreflect.MessageDescriptor, seen map[protoreflect.FullName]bool) bool {
	if seen[md.FullName()] {
		return false
	}
	seen[md.FullName()] = true
	if md.ExtensionRanges().Len() > 0 {
		return true // an extension may be a message with required fields
	}
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.Cardinality() == protoreflect.Required {
			return true
		}
		if fd.IsMap() {
			fd = fd.MapValue()
		}
		if m := fd.Message(); m != nil && walkRequired(m, seen) {
			return true
		}
	}
	return false
}
