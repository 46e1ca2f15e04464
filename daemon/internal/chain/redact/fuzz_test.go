package redact_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/chain/redact"
	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// FuzzApply decodes arbitrary bytes as get_account's answer, unknown fields
// kept, and redacts it for one of shapeCases' shapes. Whatever the bytes,
// Apply must not panic or fail, and the answer it leaves — in memory and
// once more after a round trip through the wire — must hold no denied field
// and no unknown field.
func FuzzApply(f *testing.F) {
	account := tool(f, "get_account")
	f.Add(marshalSeed(f, answer(f, account, fullAccount)), uint8(0))
	f.Add(marshalSeed(f, answer(f, account, `{"billing": {}, "lastLoginIp": "1.2.3.4"}`)), uint8(0))
	f.Add([]byte{}, uint8(1))
	r := redact.New(4)
	f.Fuzz(func(t *testing.T, data []byte, shapeIndex uint8) {
		m, ok := decode(account.Output, data)
		if !ok {
			return
		}
		tc := shapeCases[int(shapeIndex)%len(shapeCases)]
		shape := shapeOf(t, tc.clearance, tc.compartments...)
		got, err := r.Apply(account, shape, m)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		denied := r.Resolve(account.OutputPlan, account.OutputRuleCompartments, shape).Denied
		if got.Count > uint32(len(denied)) {
			t.Fatalf("%s: count %d with %d denied rules", tc.name, got.Count, len(denied))
		}
		assertWithheld(t, m, denied, "")
		out, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		back, ok := decode(account.Output, out)
		if !ok {
			t.Fatal("the redacted answer does not decode")
		}
		assertWithheld(t, back, denied, "")
	})
}

// decode is data as an answer of md, unknown fields kept, or false when it
// is not one. protobuf-go v1.36.12 panics decoding a map entry whose key
// comes twice, the second time with the wrong wire type, into a dynamicpb
// message (testdata/fuzz/FuzzApply/0747e30d1e1c35d1); such bytes never
// become an answer, so they are not Apply's to survive.
func decode(md protoreflect.MessageDescriptor, data []byte) (m *dynamicpb.Message, ok bool) {
	defer func() {
		if recover() != nil {
			m, ok = nil, false
		}
	}()
	m = dynamicpb.NewMessage(md)
	if err := (proto.UnmarshalOptions{DiscardUnknown: false}).Unmarshal(data, m); err != nil {
		return nil, false
	}
	return m, true
}

func marshalSeed(f *testing.F, m protoreflect.Message) []byte {
	b, err := proto.Marshal(m.Interface())
	if err != nil {
		f.Fatal(err)
	}
	return b
}

// assertWithheld fails when m, whose path from the answer is prefix, holds
// an unknown field or a field at or below a denied rule's path. It walks
// every populated field by name, independently of how Apply walks by
// number.
func assertWithheld(t *testing.T, m protoreflect.Message, denied []*planv1.FieldRule, prefix string) {
	t.Helper()
	if len(m.GetUnknown()) > 0 {
		t.Fatalf("%q keeps unknown fields", prefix)
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		path := prefix + string(fd.Name())
		if slices.ContainsFunc(denied, func(r *planv1.FieldRule) bool {
			return path == r.GetPath() || strings.HasPrefix(path, r.GetPath()+".")
		}) {
			t.Fatalf("%s is denied and still set", path)
		}
		switch {
		case fd.IsList() && fd.Message() != nil:
			for i := range v.List().Len() {
				assertWithheld(t, v.List().Get(i).Message(), denied, path+".")
			}
		case fd.IsMap() && fd.MapValue().Message() != nil:
			v.Map().Range(func(_ protoreflect.MapKey, v protoreflect.Value) bool {
				assertWithheld(t, v.Message(), denied, path+".")
				return true
			})
		case !fd.IsList() && !fd.IsMap() && fd.Message() != nil:
			assertWithheld(t, v.Message(), denied, path+".")
		}
		return true
	})
}
