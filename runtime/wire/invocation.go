package wire

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"google.golang.org/protobuf/proto"
)

// MaxInvocationHeaderSize bounds an encoded InvocationHeader value. An
// invocation carries attribution, a principal, an act chain of at most four
// and trace headers, so a few KiB is typical; anything near this bound is not
// what garmd sends, and refusing it before decoding bounds the work a hostile
// message can cause.
const MaxInvocationHeaderSize = 64 << 10

// Errors DecodeInvocation and EncodeInvocation wrap; match them with
// errors.Is.
var (
	// ErrNoInvocation: the header value is empty.
	ErrNoInvocation = errors.New("no invocation context")
	// ErrMalformedInvocation: the value is too large, is not canonical padded
	// base64, does not unmarshal into an InvocationContext, or carries a
	// deadline that is not a valid timestamp.
	ErrMalformedInvocation = errors.New("malformed invocation context")
	// ErrNoCallID: the invocation has an empty call_id.
	ErrNoCallID = errors.New("invocation context has no call_id")
)

// EncodeInvocation encodes inv for the InvocationHeader: standard padded
// base64 of its binary protobuf. It refuses what DecodeInvocation would
// refuse, so a value it returns always decodes.
func EncodeInvocation(inv *toolv1.InvocationContext) (string, error) {
	value, err := AppendInvocation(nil, inv)
	if err != nil {
		return "", err
	}
	return string(value), nil
}

// AppendInvocation is EncodeInvocation appending the header value to dst,
// for a caller that reuses its buffers: a sender of many calls then
// allocates only the header's string.
func AppendInvocation(dst []byte, inv *toolv1.InvocationContext) ([]byte, error) {
	if inv.GetCallId() == "" {
		return dst, ErrNoCallID
	}
	if d := inv.GetDeadline(); d != nil {
		if err := d.CheckValid(); err != nil {
			return dst, fmt.Errorf("%w: deadline: %v", ErrMalformedInvocation, err)
		}
	}
	start := len(dst)
	// The binary form goes first, after dst; its base64 after that, which
	// then moves down over it.
	out, err := proto.MarshalOptions{}.MarshalAppend(dst, inv)
	if err != nil {
		return dst, fmt.Errorf("%w: %v", ErrMalformedInvocation, err)
	}
	rawLen := len(out) - start
	n := base64.StdEncoding.EncodedLen(rawLen)
	if n > MaxInvocationHeaderSize {
		return dst, fmt.Errorf("%w: %d bytes encoded, more than %d", ErrMalformedInvocation, n, MaxInvocationHeaderSize)
	}
	out = slices.Grow(out, n)
	encoded := out[start+rawLen : start+rawLen+n]
	base64.StdEncoding.Encode(encoded, out[start:start+rawLen])
	copy(out[start:start+n], encoded)
	return out[:start+n], nil
}

// DecodeInvocation decodes an InvocationHeader value. It is an error when the
// value is empty (ErrNoInvocation); longer than MaxInvocationHeaderSize, not
// standard padded base64 in its canonical form (no line breaks, no stray
// padding bits, nothing after the padding), not a valid InvocationContext, or
// carrying an invalid deadline (ErrMalformedInvocation); or when its call_id
// is empty (ErrNoCallID).
//
// Fields this build does not know are kept, not refused: the invocation only
// informs a tool, and garmd adding to it must not break tools built before.
func DecodeInvocation(value string) (*toolv1.InvocationContext, error) {
	if value == "" {
		return nil, ErrNoInvocation
	}
	if len(value) > MaxInvocationHeaderSize {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrMalformedInvocation, MaxInvocationHeaderSize)
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(value)
	if err != nil {
		return nil, fmt.Errorf("%w: not base64: %v", ErrMalformedInvocation, err)
	}
	// The decoder skips CR and LF; only the canonical spelling is accepted,
	// so one invocation has one encoding.
	if base64.StdEncoding.EncodedLen(len(raw)) != len(value) {
		return nil, fmt.Errorf("%w: not canonical base64", ErrMalformedInvocation)
	}
	inv := new(toolv1.InvocationContext)
	if err := proto.Unmarshal(raw, inv); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformedInvocation, err)
	}
	if inv.GetCallId() == "" {
		return nil, ErrNoCallID
	}
	if d := inv.GetDeadline(); d != nil {
		if err := d.CheckValid(); err != nil {
			return nil, fmt.Errorf("%w: deadline: %v", ErrMalformedInvocation, err)
		}
	}
	return inv, nil
}

type invocationKey struct{}

// WithInvocation returns a copy of ctx carrying inv. The tool runtime puts
// the decoded invocation on every handler's context with it.
func WithInvocation(ctx context.Context, inv *toolv1.InvocationContext) context.Context {
	return context.WithValue(ctx, invocationKey{}, inv)
}

// InvocationFrom returns the invocation on ctx, or nil outside a served
// request.
func InvocationFrom(ctx context.Context) *toolv1.InvocationContext {
	inv, _ := ctx.Value(invocationKey{}).(*toolv1.InvocationContext)
	return inv
}
