package codec

import (
	"errors"
	"fmt"
	"mime"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// Content types spelled the common way, recognised without parsing.
const (
	jsonType   = "application/json"
	binaryType = "application/proto"
)

// RequestEncoding reads a request's Content-Type: protojson for the media
// type application/json — type and subtype exactly, in any case, with
// parameters, a charset among them only when it is UTF-8 — and binary
// protobuf for any other media type, or none. A value that is not one
// media type (a list, a parameter without a value, a repeated parameter)
// is an error: which type it names is a matter of who reads it, and garm
// reads nothing two ways. application/jsonx is not JSON.
func RequestEncoding(contentType string) (json bool, err error) {
	switch contentType {
	case jsonType:
		return true, nil
	case "", binaryType:
		return false, nil
	}
	mediaType, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false, fmt.Errorf("Content-Type is not one media type: %w", err)
	}
	if !strings.Contains(mediaType, "/") {
		return false, errors.New("Content-Type is not a type/subtype")
	}
	if mediaType != jsonType {
		return false, nil
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return false, errors.New("Content-Type names JSON in a charset other than UTF-8")
	}
	return true, nil
}

// ContentType is the Content-Type of an answer in the request's encoding.
func ContentType(json bool) string {
	if json {
		return jsonType
	}
	return binaryType
}

// Required fields (proto2) are checked once, when the caller's request is
// decoded, and only for a contract that has some (reachesRequired);
// re-encoding that request for the hop (by appendPlainBinary, or binOut
// when the request is not plain), and the tool's answer, skip the check
// (AllowPartial), which on dynamic messages costs a walk and several
// allocations per call. A tool's own runtime checks what it receives.
var (
	jsonIn = protojson.UnmarshalOptions{DiscardUnknown: false, AllowPartial: true}
	// Answers name fields as the contract does (customer_id), the spelling
	// of every input schema, violation and listing: a caller never meets a
	// second spelling of one field (docs/decisions/0038).
	jsonOut = protojson.MarshalOptions{AllowPartial: true, UseProtoNames: true}
	// Decoding is into a new message: Merge spares the reset a decode
	// would otherwise begin with, which on a dynamic message allocates
	// its maps a second time.
	binIn  = proto.UnmarshalOptions{DiscardUnknown: false, Merge: true, AllowPartial: true}
	binOut = proto.MarshalOptions{AllowPartial: true}
	// Answers are deterministic: the same answer is the same bytes, so a
	// caller or a cache comparing two answers compares their data.
	answerOut = proto.MarshalOptions{AllowPartial: true, Deterministic: true}
	replyIn   = proto.UnmarshalOptions{DiscardUnknown: true, AllowPartial: true, Merge: true}
)

// DecodeRequest decodes body into a new message of md. An empty body is the
// empty message.
func DecodeRequest(md protoreflect.MessageDescriptor, body []byte, json bool) (protoreflect.Message, error) {
	msg := dynamicpb.NewMessage(md)
	if len(body) == 0 {
		return msg, nil
	}
	if json {
		if !decodePlainJSON(body, msg) {
			// Not plain, or not JSON at all: protojson decides, on a
			// message the plain decode has not touched.
			msg = dynamicpb.NewMessage(md)
			if err := jsonIn.Unmarshal(body, fresh{msg}); err != nil {
				return nil, fmt.Errorf("the JSON body does not decode: %w", err)
			}
		}
		if err := checkRequired(md, msg); err != nil {
			return nil, fmt.Errorf("the JSON body does not decode: %w", err)
		}
		return msg, nil
	}
	if err := unmarshal(binIn, body, msg); err != nil {
		return nil, fmt.Errorf("the binary body does not decode: %w", err)
	}
	if err := checkRequired(md, msg); err != nil {
		return nil, fmt.Errorf("the binary body does not decode: %w", err)
	}
	if path := unknownAt(msg, ""); path != "" {
		return nil, fmt.Errorf("the binary body sets fields the contract does not describe (at %s)", path)
	}
	return msg, nil
}

// DecodeReply decodes a tool's binary answer into a new message of md,
// discarding fields the descriptor does not know.
func DecodeReply(md protoreflect.MessageDescriptor, body []byte) (protoreflect.Message, error) {
	msg := dynamicpb.NewMessage(md)
	if err := unmarshal(replyIn, body, msg); err != nil {
		return nil, fmt.Errorf("the tool's answer does not decode as %s: %w", md.FullName(), err)
	}
	return msg, nil
}

// unmarshal decodes body into msg, turning a panic of the decoder into an
// error: protobuf-go v1.36.12 panics on a map entry whose key repeats with
// another wire type when decoding into a dynamic message, and hostile bytes
// must get a refusal, not a crash.
func unmarshal(o proto.UnmarshalOptions, body []byte, msg protoreflect.Message) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the decoder failed on these bytes: %v", p)
		}
	}()
	return o.Unmarshal(body, msg.Interface())
}

// fresh is a new dynamic message as protojson receives it: without the
// Reset method, so the reset protojson begins every decode with clears the
// empty message in place instead of allocating its maps a second time.
type fresh struct{ m *dynamicpb.Message }

func (f fresh) ProtoReflect() protoreflect.Message { return f.m }

// EncodeBinary is the request as the hop carries it. A plain request is
// written by appendPlainBinary; any other, and the empty one (whose
// encoding protobuf-go gives as nil or empty by whether the message is
// valid), by protobuf-go.
func EncodeBinary(msg protoreflect.Message) ([]byte, error) {
	if b, ok := appendPlainBinary(nil, msg); ok && len(b) > 0 {
		return b, nil
	}
	return binOut.Marshal(msg.Interface())
}

// AppendBinary is EncodeBinary appending to dst, for a caller that reuses
// its buffers. When the request is not plain, what appendPlainBinary
// appended is dropped and protobuf-go appends to dst as it was.
func AppendBinary(dst []byte, msg protoreflect.Message) ([]byte, error) {
	if b, ok := appendPlainBinary(dst, msg); ok {
		return b, nil
	}
	return binOut.MarshalAppend(dst, msg.Interface())
}

// EncodeAnswer writes the answer in the caller's encoding. JSON answers are
// compact: protojson varies its whitespace on purpose, and a caller (or a
// test) comparing two answers should see the same bytes for the same data.
// A plain answer is written compact by appendPlainJSON; any other is
// encoded once by protojson and its whitespace taken out in place.
func EncodeAnswer(msg protoreflect.Message, asJSON bool) ([]byte, error) {
	if !asJSON {
		return answerOut.Marshal(msg.Interface())
	}
	if b, ok := appendPlainJSON(make([]byte, 0, answerGuess), msg); ok {
		return b, nil
	}
	b, err := jsonOut.MarshalAppend(make([]byte, 0, answerGuess), msg.Interface())
	if err != nil {
		return nil, err
	}
	return compactInPlace(b), nil
}

// answerGuess is the buffer a JSON answer starts in: a small answer fits,
// and a larger one grows it.
const answerGuess = 128

// compactInPlace removes the whitespace between the tokens of b, a JSON
// text: whitespace outside strings. What remains is b's prefix.
func compactInPlace(b []byte) []byte {
	out, inString, escaped := 0, false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			continue
		}
		b[out] = c
		out++
	}
	return b[:out]
}

// unknownAt returns the path of the first message holding unknown fields,
// "" when none does ("." names the root).
func unknownAt(m protoreflect.Message, path string) string {
	if len(m.GetUnknown()) > 0 {
		if path == "" {
			return "."
		}
		return path
	}
	found := ""
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		child := join(path, string(fd.Name()))
		switch {
		case fd.IsList() && isMessage(fd):
			l := v.List()
			for i := 0; i < l.Len() && found == ""; i++ {
				found = unknownAt(l.Get(i).Message(), child)
			}
		case fd.IsMap() && isMessage(fd.MapValue()):
			v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
				found = unknownAt(mv.Message(), child)
				return found == ""
			})
		case !fd.IsList() && !fd.IsMap() && isMessage(fd):
			found = unknownAt(v.Message(), child)
		}
		return found == ""
	})
	return found
}

func isMessage(fd protoreflect.FieldDescriptor) bool {
	k := fd.Kind()
	return k == protoreflect.MessageKind || k == protoreflect.GroupKind
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
