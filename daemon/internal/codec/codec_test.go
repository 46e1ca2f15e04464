package codec_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/codec"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/structpb"
)

// The tests decode into InvocationContext: nested messages, lists of
// messages and a map, all from a descriptor, as garmd decodes tool inputs.
var md = (&toolv1.InvocationContext{}).ProtoReflect().Descriptor()

func TestAnEmptyBodyIsTheEmptyMessage(t *testing.T) {
	for _, json := range []bool{true, false} {
		msg, err := codec.DecodeRequest(md, nil, json)
		if err != nil {
			t.Fatal(err)
		}
		if proto.Size(msg.Interface()) != 0 {
			t.Fatalf("json=%v: an empty body decoded to a non-empty message", json)
		}
	}
}

func TestUnknownJSONFieldsAreRefused(t *testing.T) {
	for _, body := range []string{
		`{"callId":"c1","extra":1}`,
		`{"attribution":{"tenant":"t","nope":"x"}}`,
		`{"act":[{"subject":"a","kind":"PRINCIPAL_KIND_AGENT","zzz":true}]}`,
	} {
		if _, err := codec.DecodeRequest(md, []byte(body), true); err == nil {
			t.Errorf("%s decoded", body)
		}
	}
	if _, err := codec.DecodeRequest(md, []byte(`{"callId":"c1","act":[{"subject":"a"}]}`), true); err != nil {
		t.Fatalf("a valid body was refused: %v", err)
	}
}

func TestUnknownBinaryFieldsAreRefusedAtAnyDepth(t *testing.T) {
	known, _ := proto.Marshal(&toolv1.InvocationContext{CallId: "c1", Act: []*toolv1.Act{{Subject: "a"}}})
	unknown := protowire.AppendTag(nil, 999, protowire.VarintType)
	unknown = protowire.AppendVarint(unknown, 7)

	top := append(append([]byte{}, known...), unknown...)
	// An Act element carrying an unknown field: field 3 (act) as bytes.
	act, _ := proto.Marshal(&toolv1.Act{Subject: "b"})
	act = append(act, unknown...)
	deep := protowire.AppendTag(append([]byte{}, known...), 3, protowire.BytesType)
	deep = protowire.AppendBytes(deep, act)
	// A map value cannot hold a message here (tags is string to string), so
	// the attribution message stands for a singular nested message.
	attr, _ := proto.Marshal(&toolv1.CallContext{Tenant: "t"})
	attr = append(attr, unknown...)
	nested := protowire.AppendTag(nil, 1, protowire.BytesType)
	nested = protowire.AppendBytes(nested, attr)

	for name, body := range map[string][]byte{"top": top, "list element": deep, "nested": nested} {
		_, err := codec.DecodeRequest(md, body, false)
		if err == nil {
			t.Errorf("%s: unknown field decoded", name)
			continue
		}
		if strings.Contains(err.Error(), string(md.FullName())) {
			t.Errorf("%s: the error names the type: %v", name, err)
		}
	}
	if _, err := codec.DecodeRequest(md, known, false); err != nil {
		t.Fatalf("a valid binary body was refused: %v", err)
	}
}

func TestInvalidUTF8AndGarbageAreRefused(t *testing.T) {
	bad := protowire.AppendTag(nil, 8, protowire.BytesType)
	bad = protowire.AppendBytes(bad, []byte{0xff, 0xfe})
	for name, c := range map[string]struct {
		body []byte
		json bool
	}{
		"invalid utf-8 in a binary string": {bad, false},
		"truncated binary":                 {[]byte{0x42, 0x10, 'a'}, false},
		"not JSON":                         {[]byte("{callId:"), true},
		"JSON of the wrong type":           {[]byte(`{"callId":5}`), true},
		"trailing JSON":                    {[]byte(`{"callId":"a"} {}`), true},
	} {
		if _, err := codec.DecodeRequest(md, c.body, c.json); err == nil {
			t.Errorf("%s decoded", name)
		}
	}
}

func TestARepliesUnknownFieldsAreDiscardedNotForwarded(t *testing.T) {
	body, _ := proto.Marshal(&toolv1.InvocationContext{CallId: "c1"})
	body = protowire.AppendTag(body, 999, protowire.BytesType)
	body = protowire.AppendBytes(body, []byte("a field the catalogue does not plan"))
	msg, err := codec.DecodeReply(md, body)
	if err != nil {
		t.Fatal(err)
	}
	out, err := codec.EncodeAnswer(msg, false)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "does not plan") {
		t.Fatal("an unplanned field reached the answer")
	}
}

func TestTheContentTypeDecidesTheEncoding(t *testing.T) {
	for _, c := range []struct {
		contentType string
		json, bad   bool
	}{
		{"application/json", true, false},
		{"Application/JSON; charset=utf-8", true, false},
		{`application/json ; charset="UTF-8"`, true, false},
		{"application/json;", true, false},
		{"application/proto", false, false},
		{"application/x-protobuf", false, false},
		{"", false, false},
		{"text/json", false, false},
		// Not JSON by a prefix: the media type is exact.
		{"application/jsonx", false, false},
		{"application/json-seq", false, false},
		{"application/json+x", false, false},
		// Not one media type: whoever reads it decides what it is.
		{"application/json, application/proto", false, true},
		{"application/json; charset", false, true},
		{"application/json; charset=utf-8; charset=latin1", false, true},
		{"application/json; charset=latin1", false, true},
		{"application", false, true},
	} {
		json, err := codec.RequestEncoding(c.contentType)
		if (err != nil) != c.bad || json != c.json {
			t.Errorf("RequestEncoding(%q) = %v, %v; want json %v, refused %v", c.contentType, json, err, c.json, c.bad)
		}
	}
}

func TestABinaryAnswerIsTheSameBytesEveryTime(t *testing.T) {
	msg := dynamicpb.NewMessage(md)
	tags := msg.Mutable(md.Fields().ByName("attribution")).Message()
	tagsFD := tags.Descriptor().Fields().ByName("tags")
	m := tags.Mutable(tagsFD).Map()
	for i := range 64 {
		k := fmt.Sprintf("key-%02d", i)
		m.Set(protoreflect.ValueOfString(k).MapKey(), protoreflect.ValueOfString("v"))
	}
	first, err := codec.EncodeAnswer(msg, false)
	if err != nil {
		t.Fatal(err)
	}
	for range 32 {
		again, err := codec.EncodeAnswer(msg, false)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first, again) {
			t.Fatal("the same answer encoded to different bytes")
		}
	}
}

func FuzzDecodeRequest(f *testing.F) {
	valid, _ := proto.Marshal(&toolv1.InvocationContext{CallId: "c", Act: []*toolv1.Act{{Subject: "a"}}, Attribution: &toolv1.CallContext{Tags: map[string]string{"k": "v"}}})
	f.Add(valid, false)
	f.Add([]byte(`{"callId":"c","attribution":{"tags":{"k":"v"}}}`), true)
	f.Add([]byte(`{"act":[{"subject":"a"}]}`), true)
	f.Add([]byte{0x1a, 0x02, 0xf8, 0x3e}, false)
	f.Fuzz(func(t *testing.T, body []byte, json bool) {
		msg, err := codec.DecodeRequest(md, body, json)
		if err != nil {
			return
		}
		if hasUnknown(msg) {
			t.Fatal("an accepted body holds unknown fields")
		}
		if _, err := codec.EncodeBinary(msg); err != nil {
			t.Fatalf("an accepted body does not re-encode: %v", err)
		}
	})
}

func hasUnknown(m protoreflect.Message) bool {
	if len(m.GetUnknown()) > 0 {
		return true
	}
	found := false
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			for i := 0; i < v.List().Len(); i++ {
				found = found || hasUnknown(v.List().Get(i).Message())
			}
		case fd.IsMap():
		case fd.Message() != nil:
			found = hasUnknown(v.Message())
		}
		return !found
	})
	return found
}

func TestBytesThatPanicTheDecoderAreRefusedNotCrashed(t *testing.T) {
	// A map entry whose key repeats with another wire type: protobuf-go
	// v1.36.12 panics decoding it into a dynamic message.
	structMD := (&structpb.Struct{}).ProtoReflect().Descriptor()
	body := []byte{0x0a, 0x08, 0x0a, 0x01, 'k', 0x0d, 0x00, 0x00, 0x00, 0x00}
	if _, err := codec.DecodeRequest(structMD, body, false); err == nil {
		t.Fatal("the bytes decoded")
	}
	if _, err := codec.DecodeReply(structMD, body); err == nil {
		t.Fatal("the reply decoded")
	}
}

// One spelling per field (docs/decisions/0038): answers use the contract's
// field names, which the input schemas use; requests are read in either
// spelling, as the protobuf JSON mapping reads them, and naming one field
// twice is refused.
func TestAJSONAnswerNamesFieldsAsTheContractDoes(t *testing.T) {
	msg, err := codec.DecodeRequest(md, []byte(`{"call_id":"c1","attribution":{"tenant":"t"}}`), true)
	if err != nil {
		t.Fatal(err)
	}
	out, err := codec.EncodeAnswer(msg, true)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != `{"attribution":{"tenant":"t"},"call_id":"c1"}` {
		t.Fatalf("answered %s", out)
	}
	if _, err := codec.DecodeRequest(md, []byte(`{"callId":"c1"}`), true); err != nil {
		t.Fatalf("the JSON name of a field was refused on input: %v", err)
	}
	if _, err := codec.DecodeRequest(md, []byte(`{"callId":"c1","call_id":"c2"}`), true); err == nil {
		t.Fatal("a field named in both spellings was read")
	}
}
