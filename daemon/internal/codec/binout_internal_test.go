package codec

import (
	"bytes"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// The plain binary encoder is held to protobuf-go (decision 0078): what it
// writes decodes to the message it was given, and for a message without
// maps it is protobuf-go's deterministic encoding, byte for byte. What it
// declines, AppendBinary encodes as protobuf-go does.

// decodeBinary decodes b as protobuf-go does into a new message of md,
// extensions resolved among testdata's types.
func decodeBinary(md protoreflect.MessageDescriptor, b []byte) (protoreflect.Message, error) {
	m := dynamicpb.NewMessage(md)
	o := proto.UnmarshalOptions{AllowPartial: true, Resolver: dynamicpb.NewTypes(plainTypes())}
	return m, o.Unmarshal(b, m)
}

// sameBinary encodes m with the plain encoder and fails unless it declined
// or wrote bytes that decode to m, which for a message without maps are
// protobuf-go's deterministic bytes. It reports whether the plain encoder
// wrote m.
func sameBinary(t testing.TB, m protoreflect.Message) bool {
	t.Helper()
	plain, ok := appendPlainBinary(nil, m)
	if !ok {
		return false
	}
	want, err := proto.MarshalOptions{AllowPartial: true, Deterministic: true}.Marshal(m.Interface())
	if err != nil {
		t.Fatalf("the plain encoder wrote %v, which protobuf-go refuses to: %v", m, err)
	}
	back, err := decodeBinary(m.Descriptor(), plain)
	if err != nil {
		t.Fatalf("the plain encoder wrote %x for %v, which does not decode: %v", plain, m, err)
	}
	if !sameMessage(back, m) {
		t.Fatalf("the plain encoder wrote %x for\n%v\nwhich decodes to\n%v", plain, m, back)
	}
	if !holdsMap(m) && !bytes.Equal(plain, want) {
		t.Fatalf("the plain encoder wrote\n%x\nprotobuf-go deterministically\n%x\nfor %v", plain, want, m)
	}
	return true
}

// holdsMap reports whether m or a message in it has a map set, whose
// entries the plain encoder writes in Range order.
func holdsMap(m protoreflect.Message) bool {
	found := false
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap():
			found = true
		case fd.IsList() && isMessage(fd):
			for i := range v.List().Len() {
				found = found || holdsMap(v.List().Get(i).Message())
			}
		case isMessage(fd):
			found = holdsMap(v.Message())
		}
		return !found
	})
	return found
}

// fromJSON is body decoded by protojson into a new message of md.
func fromJSON(t testing.TB, md protoreflect.MessageDescriptor, body string) *dynamicpb.Message {
	t.Helper()
	m := dynamicpb.NewMessage(md)
	if err := jsonIn.Unmarshal([]byte(body), m); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	return m
}

func set(m protoreflect.Message, field string, v protoreflect.Value) {
	m.Set(m.Descriptor().Fields().ByName(protoreflect.Name(field)), v)
}

// nested is a Kinds message with depth children below it, the innermost
// holding s.
func nested(t testing.TB, depth int) protoreflect.Message {
	kinds := plainType(t, "Kinds")
	m := dynamicpb.NewMessage(kinds)
	set(m, "s", protoreflect.ValueOfString("innermost"))
	for range depth {
		parent := dynamicpb.NewMessage(kinds)
		set(parent, "child", protoreflect.ValueOfMessage(m))
		m = parent
	}
	return m
}

func TestPlainBinaryDecodesToTheMessageItWasGiven(t *testing.T) {
	kinds := plainType(t, "Kinds")
	var messages []protoreflect.Message
	for _, body := range []string{
		`{}`,
		`{"b":true,"i32":-7,"s32":-2147483648,"sf32":-1,"u32":4294967295,"f32":4294967295}`,
		`{"i64":"-9223372036854775808","s64":"-1","sf64":"-9223372036854775808","u64":"18446744073709551615","f64":"18446744073709551615"}`,
		`{"i32":-1,"s32":2147483647,"colour":-1,"rcolour":[-5,1,2147483647,-2147483648]}`,
		`{"fl":-0,"db":-0,"rfl":[-0,0,1.5],"rdb":[-0,0]}`,
		`{"db":"NaN","fl":"-Infinity","rdb":["NaN","Infinity",1e-320],"rfl":["NaN",3.4028235e38,1e-45]}`,
		`{"s":"é 😀 \u0000","by":"AAE=","rs":["","é",""],"rby":["","AA=="]}`,
		`{"child":{"child":{"s":"deep","rchild":[{},{"i32":1}]},"ri32":[1]},"rchild":[{"child":{}},{}]}`,
		`{"ri32":[1,-1,300,-2147483648],"rs32Unpacked":[-1,0,1],"rb":[true,false],"ri64":["-2",3],"rs":["a"]}`,
		`{"m_str":{"a":1,"":0,"é":-3},"m_i32":{"-5":"x","0":""},"m_i64":{"9":{"s":"v"},"-9":{},"0":{"m_i64":{"1":{}}}}}`,
		`{"m_u32":{"0":false,"9":true},"m_u64":{"18446744073709551615":"AQ==","0":""},"m_bool":{"true":"COLOUR_RED","false":0}}`,
		`{"m_s64":{"-1":0.5,"0":-0,"9223372036854775807":"NaN"},"m_f32":{"7":-1,"0":0,"4294967295":1}}`,
		`{"m_si32":{"-2147483648":"a","0":""},"m_fx64":{"18446744073709551615":-1,"0":0},"m_sfx32":{"-1":5,"0":0}}`,
		`{"m_sfx64":{"-9223372036854775808":{"b":true,"m_sfx64":{"1":{}}},"1":{}}}`,
		`{"optI32":0,"optS":""}`, `{"oneS":""}`, `{"oneI64":"0"}`, `{"oneChild":{}}`,
		`{"oneS":"first in the oneof, last on the wire","snakeCaseName":"z","renamed":-1,"b":true}`,
		`{"oneChild":{"oneChild":{"oneI64":"-1"},"optS":"x"},"rchild":[{"oneS":"y","i32":2}]}`,
	} {
		messages = append(messages, fromJSON(t, kinds, body))
	}

	long := dynamicpb.NewMessage(kinds)
	set(long, "s", protoreflect.ValueOfString(strings.Repeat("é", 100)))
	set(long, "by", protoreflect.ValueOfBytes(bytes.Repeat([]byte{0xff}, 70_000)))
	packed := long.Mutable(kinds.Fields().ByName("ri64")).List()
	for i := range 100 {
		packed.Append(protoreflect.ValueOfInt64(int64(-i)))
	}
	wide := dynamicpb.NewMessage(kinds)
	set(wide, "child", protoreflect.ValueOfMessage(long))                 // a length of three bytes
	set(wide, "one_child", protoreflect.ValueOfMessage(fromJSON(t, kinds, // a length of two
		`{"s":"`+strings.Repeat("x", 200)+`"}`)))
	messages = append(messages, long, wide, nested(t, maxPlainDepth-1))

	// Fields protobuf-go does not know are written after the known ones,
	// as protobuf-go writes them.
	unknown := fromJSON(t, kinds, `{"b":true,"child":{"i32":3}}`)
	unknown.SetUnknown(protowire.AppendString(protowire.AppendTag(nil, 1000, protowire.BytesType), "later"))
	child := unknown.Mutable(kinds.Fields().ByName("child")).Message()
	child.SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 999, protowire.VarintType), 7))
	messages = append(messages, unknown)

	old := plainType(t, "Old")
	for _, body := range []string{
		`{"a":5}`, `{"a":0,"name":""}`, `{"name":"é"}`,
		`{"closed":"CLOSED_ZERO","rclosed":[1,0,1]}`, `{"rpacked":["-1","0","9223372036854775807"]}`,
		`{"strict":{}}`, `{"children":{"k":{"a":1,"children":{"":{}}},"":{}}}`,
	} {
		messages = append(messages, fromJSON(t, old, body))
	}
	// A closed enum holding a value it does not name: protobuf-go's
	// decoder keeps it in a dynamic message, and the encoder writes it.
	closed := dynamicpb.NewMessage(old)
	wire := protowire.AppendVarint(protowire.AppendTag(nil, 8, protowire.VarintType), 5)
	wire = protowire.AppendVarint(protowire.AppendTag(wire, 7, protowire.VarintType), 9)
	if err := unmarshal(binIn, wire, closed); err != nil {
		t.Fatal(err)
	}
	messages = append(messages, closed)

	for _, m := range messages {
		if !sameBinary(t, m) {
			t.Errorf("the plain encoder declined %v", m)
		}
	}
}

// Messages the plain encoder leaves to protobuf-go, and AppendBinary's
// answer on each: protobuf-go's, appended to dst as the caller gave it.
func TestPlainBinaryLeavesTheRestToProtobufGo(t *testing.T) {
	kinds, old := plainType(t, "Kinds"), plainType(t, "Old")
	badProto3 := fromJSON(t, kinds, `{"b":true}`)
	set(badProto3, "s", protoreflect.ValueOfString("\xff"))
	badKey := fromJSON(t, kinds, `{"i32":1}`)
	badKey.Mutable(kinds.Fields().ByName("m_str")).Map().Set(protoreflect.ValueOfString("\xfe").MapKey(), protoreflect.ValueOfInt32(1))
	badProto2 := fromJSON(t, old, `{"a":1}`)
	set(badProto2, "name", protoreflect.ValueOfString("ok \xff"))
	badProto2Key := fromJSON(t, old, `{"children":{"k":{}}}`)
	badProto2Key.Mutable(old.Fields().ByName("children")).Map().Set(protoreflect.ValueOfString("\xc0").MapKey(), protoreflect.ValueOfMessage(dynamicpb.NewMessage(old)))

	extendable := plainType(t, "Extendable")
	withExtension := dynamicpb.NewMessage(extendable)
	set(withExtension, "n", protoreflect.ValueOfInt32(1))
	note, err := plainTypes().FindDescriptorByName("codectest.v1.note")
	if err != nil {
		t.Fatal(err)
	}
	withExtension.Set(dynamicpb.NewExtensionType(note.(protoreflect.ExtensionDescriptor)).TypeDescriptor(), protoreflect.ValueOfString("x"))
	holdsExtendable := dynamicpb.NewMessage(old)
	set(holdsExtendable, "a", protoreflect.ValueOfInt32(2))
	set(holdsExtendable, "ext", protoreflect.ValueOfMessage(withExtension))

	for name, m := range map[string]protoreflect.Message{
		"a well-known type":                  fromJSON(t, kinds, `{"b":true,"at":"2024-01-01T00:00:00Z"}`),
		"a well-known type nested":           fromJSON(t, kinds, `{"rchild":[{"i32":1},{"meta":{"k":[1,"x",null]}}]}`),
		"a well-known type as a map value":   fromJSON(t, kinds, `{"m_i64":{"1":{"at":"1970-01-01T00:00:01Z"}}}`),
		"a group":                            fromJSON(t, old, `{"a":1,"Grp":{"g":1}}`),
		"a repeated group":                   fromJSON(t, old, `{"children":{"k":{"Rg":[{"x":"a"}]}}}`),
		"a message that takes extensions":    withExtension,
		"one nested":                         holdsExtendable,
		"a proto3 string that is not UTF-8":  badProto3,
		"a proto3 map key that is not UTF-8": badKey,
		"a proto2 string that is not UTF-8":  badProto2,
		"a proto2 key that is not UTF-8":     badProto2Key,
		"nesting maxPlainDepth deep":         nested(t, maxPlainDepth),
	} {
		if sameBinary(t, m) {
			t.Errorf("%s: the plain encoder took %v", name, m)
			continue
		}
		prefix := "caller's bytes"
		got, gotErr := AppendBinary(append(make([]byte, 0, 4096), prefix...), m)
		want, wantErr := binOut.MarshalAppend([]byte(prefix), m.Interface())
		if (gotErr == nil) != (wantErr == nil) {
			t.Errorf("%s: AppendBinary answered %v, protobuf-go %v", name, gotErr, wantErr)
			continue
		}
		if gotErr != nil {
			continue
		}
		if !bytes.HasPrefix(got, []byte(prefix)) {
			t.Fatalf("%s: AppendBinary lost the caller's bytes: %q", name, got)
		}
		gotBack, err1 := decodeBinary(m.Descriptor(), got[len(prefix):])
		wantBack, err2 := decodeBinary(m.Descriptor(), want[len(prefix):])
		if err1 != nil || err2 != nil || !sameMessage(gotBack, wantBack) {
			t.Errorf("%s: AppendBinary wrote %v (%v), protobuf-go %v (%v)", name, gotBack, err1, wantBack, err2)
		}
	}
}

func TestEncodeBinaryOfAnEmptyRequestIsEmptyNotNil(t *testing.T) {
	b, err := EncodeBinary(dynamicpb.NewMessage(plainType(t, "Kinds")))
	if err != nil || b == nil || len(b) != 0 {
		t.Fatalf("EncodeBinary wrote %#v (%v), want an empty slice", b, err)
	}
	b, err = EncodeBinary(fromJSON(t, plainType(t, "Kinds"), `{"i32":1}`))
	if err != nil || !bytes.Equal(b, []byte{2 << 3, 1}) {
		t.Fatalf("EncodeBinary wrote %x (%v)", b, err)
	}
}

func TestAppendBinaryWritesAPlainRequestAfterTheCallersBytes(t *testing.T) {
	m := fromJSON(t, plainType(t, "Kinds"), `{"s":"x","child":{"i32":1}}`)
	want, _ := appendPlainBinary([]byte("caller's bytes"), m)
	for _, dst := range [][]byte{[]byte("caller's bytes"), append(make([]byte, 0, 64), "caller's bytes"...)} {
		got, err := AppendBinary(dst, m)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("AppendBinary wrote %q (%v), want %q", got, err, want)
		}
	}
}

func TestThePlainBinaryEncoderAllocatesOnlyItsOutput(t *testing.T) {
	m := fromJSON(t, plainType(t, "Kinds"), `{"s":"x","ri32":[1,2],"rchild":[{"b":true},{}],"child":{"by":"AA==","child":{"i64":"-1"}},
		"m_str":{"a":1,"b":2},"m_i64":{"1":{"m_bool":{"true":1}}},"oneS":"o","m_sfx64":{"2":{"rs":["p","q"]}}}`)
	buf := make([]byte, 0, 1024)
	// An encoder that has written once writes again without allocating.
	held := binaryEncoders.New().(*binaryEncoder)
	if _, ok := held.write(buf[:0], m); !ok {
		t.Fatal("the plain encoder declined")
	}
	if n := testing.AllocsPerRun(100, func() { buf, _ = held.write(buf[:0], m) }); n != 0 {
		t.Errorf("the plain encoder allocated %v times per message", n)
	}
	// Through the pool, a call allocates nothing while the pool keeps its
	// encoder. Under the race detector sync.Pool drops a share of what it
	// is given on purpose, so a call allocates at most what a new encoder
	// does; make test runs this package once more without the race
	// detector, where the pool is held to zero.
	fresh := testing.AllocsPerRun(10, func() { buf, _ = binaryEncoders.New().(*binaryEncoder).write(buf[:0], m) })
	limit := 0.0
	if raceDetector {
		limit = fresh
	}
	if n := testing.AllocsPerRun(100, func() { buf, _ = appendPlainBinary(buf[:0], m) }); n > limit {
		t.Errorf("appendPlainBinary allocated %v times per plain message, more than %v", n, limit)
	}
	if n := testing.AllocsPerRun(100, func() { buf, _ = AppendBinary(buf[:0], m) }); n > limit {
		t.Errorf("AppendBinary allocated %v times per plain message, more than %v", n, limit)
	}
}

// FuzzPlainBinaryEncode holds the plain encoder to protobuf-go on any
// message the fuzzed bytes decode to: what it writes decodes to the same
// message, and is protobuf-go's deterministic encoding when the message
// holds no map. keepUnknown decodes as a request is decoded, keeping
// fields the descriptor does not know, instead of as an answer is.
func FuzzPlainBinaryEncode(f *testing.F) {
	kinds, old := plainType(f, "Kinds"), plainType(f, "Old")
	for _, seed := range []struct {
		old  bool
		body string
	}{
		{false, `{"b":true,"i64":"-1","fl":0.1,"db":-0,"s":"é","by":"AAE=","colour":-5,"child":{"rchild":[{"u64":"1"}]}}`},
		{false, `{"m_str":{"b":1,"a":2},"m_i32":{"2":"x"},"m_bool":{"true":1},"m_sfx64":{"3":{"oneS":"o"}},"oneS":"o","renamed":1}`},
		{false, `{"ri32":[-1,2],"rs32Unpacked":[-1,2],"rdb":["NaN"],"rcolour":[1,-1],"oneChild":{"ri64":["-9"]}}`},
		{true, `{"a":0,"name":"n","closed":"CLOSED_ONE","rclosed":[0,1],"rpacked":["-1"],"strict":{},"children":{"k":{"a":5}}}`},
	} {
		md := kinds
		if seed.old {
			md = old
		}
		b, err := proto.MarshalOptions{AllowPartial: true}.Marshal(fromJSON(f, md, seed.body))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, seed.old, false)
		f.Add(append(b, 0xc2, 0x3e, 0x01, 0x07), seed.old, true) // field 1000, unknown to both
	}
	f.Fuzz(func(t *testing.T, wire []byte, isOld, keepUnknown bool) {
		md := kinds
		if isOld {
			md = old
		}
		in := replyIn
		if keepUnknown {
			in = binIn
		}
		m := dynamicpb.NewMessage(md)
		if err := unmarshal(in, wire, m); err != nil {
			return
		}
		sameBinary(t, m)
	})
}

func BenchmarkAppendBinary(b *testing.B) {
	m := fromJSON(b, plainType(b, "Kinds"), `{"s":"customer-4217","i64":"90210","b":true,"child":{"i32":7,"s":"eu-west-1"}}`)
	buf := make([]byte, 0, 256)
	b.Run("plain", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buf, _ = appendPlainBinary(buf[:0], m)
		}
	})
	b.Run("protobuf-go", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buf, _ = binOut.MarshalAppend(buf[:0], m.Interface())
		}
	})
}
