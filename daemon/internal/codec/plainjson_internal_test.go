package codec

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

// The plain JSON codec is held to protojson (decision 0078): whatever the
// plain decoder accepts, protojson accepts, into the same message; whatever
// the plain encoder writes is protojson's answer, compact. The messages are
// testdata's, built by protodesc as garmd builds a catalogue's.

var plainTypes = sync.OnceValue(func() *protoregistry.Files {
	compiler := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{ImportPaths: []string{"testdata"}}),
	}
	compiled, err := compiler.Compile(context.Background(), "plain.proto", "plain2.proto")
	if err != nil {
		panic(err)
	}
	set := &descriptorpb.FileDescriptorSet{}
	seen := map[string]bool{}
	var add func(fd protoreflect.FileDescriptor)
	add = func(fd protoreflect.FileDescriptor) {
		if seen[fd.Path()] {
			return
		}
		seen[fd.Path()] = true
		for i := range fd.Imports().Len() {
			add(fd.Imports().Get(i).FileDescriptor)
		}
		set.File = append(set.File, protodesc.ToFileDescriptorProto(fd))
	}
	for _, f := range compiled {
		add(f)
	}
	files, err := protodesc.NewFiles(set)
	if err != nil {
		panic(err)
	}
	return files
})

func plainType(t testing.TB, name string) protoreflect.MessageDescriptor {
	t.Helper()
	d, err := plainTypes().FindDescriptorByName(protoreflect.FullName("codectest.v1." + name))
	if err != nil {
		t.Fatal(err)
	}
	return d.(protoreflect.MessageDescriptor)
}

// sameAsProtojson decodes body both ways and fails unless the plain
// decoder either declined or agreed with protojson. It reports whether
// the plain decoder took the body.
func sameAsProtojson(t testing.TB, md protoreflect.MessageDescriptor, body []byte) bool {
	t.Helper()
	plain := dynamicpb.NewMessage(md)
	if !decodePlainJSON(body, plain) {
		return false
	}
	want := dynamicpb.NewMessage(md)
	if err := jsonIn.Unmarshal(body, want); err != nil {
		t.Fatalf("the plain decoder took %q, which protojson refuses: %v", body, err)
	}
	if !sameMessage(plain, want) {
		t.Fatalf("%q: the plain decoder read %v, protojson %v", body, plain, want)
	}
	return true
}

// sameMessage compares two messages by their deterministic encoding, which
// tells -0 from 0, and by proto.Equal, which tells an empty list set from
// none.
func sameMessage(a, b protoreflect.Message) bool {
	det := proto.MarshalOptions{Deterministic: true, AllowPartial: true}
	ab, err1 := det.Marshal(a.Interface())
	bb, err2 := det.Marshal(b.Interface())
	return err1 == nil && err2 == nil && bytes.Equal(ab, bb) && proto.Equal(a.Interface(), b.Interface())
}

// sameAnswer encodes m both ways and fails unless the plain encoder
// declined or wrote protojson's bytes, compact. It reports whether the
// plain encoder wrote the answer.
func sameAnswer(t testing.TB, m protoreflect.Message) bool {
	t.Helper()
	plain, ok := appendPlainJSON(nil, m)
	want, err := jsonOut.Marshal(m.Interface())
	if !ok {
		return false
	}
	if err != nil {
		t.Fatalf("the plain encoder wrote %s for an answer protojson refuses: %v", plain, err)
	}
	if want = compactInPlace(want); !bytes.Equal(plain, want) {
		t.Fatalf("the plain encoder wrote\n%s\nprotojson\n%s", plain, want)
	}
	return true
}

func TestPlainJSONDecodesAsProtojsonDoes(t *testing.T) {
	kinds := plainType(t, "Kinds")
	for _, body := range []string{
		`{}`, ` { } `,
		`{"b":true,"i32":-7,"s32":-2147483648,"sf32":2147483647,"u32":4294967295,"f32":0}`,
		`{"i64":"-9223372036854775808","s64":9223372036854775807,"sf64":"0","u64":"18446744073709551615","f64":18446744073709551615}`,
		`{"i32":"12","u32":"0","fl":1.5,"db":-0,"s":"plain"}`,
		`{"fl":3.4028235e38,"db":1e-320,"rdb":[0.1,-2.5E+3,1e308],"rfl":[1e-7,0]}`,
		`{"s":"esc \" \\ \/ \b \f \n \r \t \u00e9 \u0000 \uffff é 😀"}`,
		`{"by":"aGVsbG8=","rby":["","AA==","_-8","aGk"]}`,
		`{"colour":"COLOUR_BLUE","rcolour":["COLOUR_RED",7,0],"m_bool":{"true":"COLOUR_RED","false":2}}`,
		`{"child":{"child":{"s":"deep","rchild":[{},{"i32":1}]}}}`,
		`{"m_str":{"a":1,"":2,"b c":-3},"m_i32":{"-5":"x","0":"y"},"m_i64":{"9":{"s":"v"}},"m_u32":{"1":true}}`,
		`{"m_u64":{"18446744073709551615":"AQ=="},"m_s64":{"-1":0.5},"m_f32":{"7":-1}}`,
		`{"optI32":0,"opt_s":"","oneS":"x"}`, `{"oneChild":{}}`, `{"one_i64":"5"}`,
		`{"renamed":3,"snakeCaseName":"a"}`, `{"snake_case_name":"b","json_named":4}`,
		`{"ri32":[],"rs":["a","b"],"rb":[true,false],"ri64":["1",2]}`,
		"{\n\t\"s\" :\r \"x\" ,\"b\": false}\n",
	} {
		if !sameAsProtojson(t, kinds, []byte(body)) {
			t.Errorf("the plain decoder declined %s", body)
		}
	}
	old := plainType(t, "Old")
	for _, body := range []string{
		`{"a":0,"name":"n","closed":"CLOSED_ONE","rclosed":[0,5]}`,
		`{"Grp":{"g":1},"Rg":[{"x":"a"},{}]}`,
		`{"strict":{}}`, `{"children":{"k":{"a":1}}}`,
	} {
		if !sameAsProtojson(t, old, []byte(body)) {
			t.Errorf("the plain decoder declined %s", body)
		}
	}
}

// Bodies the plain decoder leaves to protojson: refused ones, and accepted
// ones whose JSON is not plain. DecodeRequest's answer on each is
// protojson's.
func TestPlainJSONLeavesTheRestToProtojson(t *testing.T) {
	kinds := plainType(t, "Kinds")
	for _, body := range []string{
		`{"i32":1,"i32":2}`, `{"i32":1,"i_32":2}`, `{"renamed":1,"json_named":2}`,
		`{"oneS":"a","one_i64":"1"}`, `{"nope":1}`, `{"[codectest.v1.x]":1}`,
		`{"s":null}`, `{"rs":[null]}`, `{"m_str":{"a":null}}`,
		`{"i32":1.0}`, `{"i32":1e2}`, `{"i32":"1e2"}`, `{"i32":" 1"}`, `{"i32":01}`, `{"i32":+1}`, `{"i32":2147483648}`,
		`{"u32":-1}`, `{"fl":"NaN"}`, `{"db":"Infinity"}`, `{"db":1e400}`, `{"fl":1e39}`, `{"db":"1.5"}`,
		`{"b":"true"}`, `{"b":1}`, `{"b":tru}`, `{"b":truex}`, `{"s":1}`, `{"s":"\ud83d\ude00"}`, `{"s":"\ud800"}`,
		`{"s":"\x"}`, "{\"s\":\"\x01\"}", "{\"s\":\"\xff\"}", `{"s":"unterminated}`,
		`{"colour":"COLOUR_GREEN"}`, `{"colour":1.5}`, `{"colour":2147483648}`,
		`{"by":"***"}`, `{"m_i32":{"01":"x"}}`, `{"m_i32":{"a":"x"}}`, `{"m_bool":{"True":0}}`, `{"m_str":{"a":1,"a":2}}`,
		`{"at":"2024-01-01T00:00:00Z"}`, `{"meta":{"k":[1,"x",null]}}`,
		`{"i32":1,}`, `{,}`, `{"i32" 1}`, `{"i32":1}x`, `{"i32":1}{}`, `[]`, `null`, `"x"`, `{`, `{"rs":["a",]}`,
		"\ufeff{}", `{"\u0073":"escaped key"}`,
		strings.Repeat(`{"child":`, 40) + `{}` + strings.Repeat(`}`, 40),
	} {
		if sameAsProtojson(t, kinds, []byte(body)) {
			t.Errorf("the plain decoder took %s", body)
		}
		got, gotErr := DecodeRequest(kinds, []byte(body), true)
		want := dynamicpb.NewMessage(kinds)
		wantErr := jsonIn.Unmarshal([]byte(body), want)
		if (gotErr == nil) != (wantErr == nil) || (gotErr == nil && !sameMessage(got, want)) {
			t.Errorf("%s: DecodeRequest answered %v, protojson %v", body, gotErr, wantErr)
		}
	}
	extendable := plainType(t, "Extendable")
	if sameAsProtojson(t, extendable, []byte(`{"n":1}`)) {
		t.Error("the plain decoder took a message that takes extensions")
	}
}

func TestPlainJSONEncodesAsProtojsonDoes(t *testing.T) {
	kinds := plainType(t, "Kinds")
	for _, body := range []string{
		`{}`,
		`{"b":true,"i32":-7,"s32":-2147483648,"sf32":2147483647,"u32":4294967295,"f32":1}`,
		`{"i64":"-9223372036854775808","s64":"1","sf64":"-1","u64":"18446744073709551615","f64":"3"}`,
		`{"fl":3.4028235e38,"db":1e-320,"rdb":[0.1,-2.5e3,1e21,1e20,1e-6,1e-7,123456789012345678],"rfl":[1e-7,0.3,-0,1e21]}`,
		`{"db":"NaN","rdb":["Infinity","-Infinity"],"rfl":["NaN"]}`,
		`{"s":"esc \" \\ / \b \f \n \r \t \u00e9 \u0000 \u001f \u007f \u2028 \ufffd < > & é 😀"}`,
		`{"by":"aGVsbG8=","rby":["","AA==","_-8"]}`,
		`{"colour":"COLOUR_BLUE","rcolour":["COLOUR_RED",7,-3],"m_bool":{"true":"COLOUR_RED","false":9}}`,
		`{"child":{"child":{"s":"deep","rchild":[{},{"i32":1}]}}}`,
		`{"m_str":{"b":1,"":2,"a":-3,"é":4,"Z":5},"m_i32":{"-5":"x","0":"y","-10":"z","3":""},"m_i64":{"9":{"s":"v"},"-9":{}}}`,
		`{"m_u32":{"10":true,"9":false},"m_u64":{"18446744073709551615":"AQ==","2":""},"m_s64":{"-1":0.5,"-2":1},"m_f32":{"7":-1,"1":2}}`,
		`{"optI32":0,"opt_s":"","oneChild":{}}`, `{"one_i64":"0"}`,
		`{"renamed":3,"snake_case_name":"a"}`,
	} {
		m := dynamicpb.NewMessage(kinds)
		if err := protojson.Unmarshal([]byte(body), m); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if !sameAnswer(t, m) {
			t.Errorf("the plain encoder declined %s", body)
		}
	}
	old := plainType(t, "Old")
	for _, body := range []string{`{"a":5,"Grp":{"g":1},"Rg":[{"x":"a"},{}],"closed":"CLOSED_ONE","rclosed":[0,5]}`, `{"strict":{}}`} {
		m := dynamicpb.NewMessage(old)
		if err := jsonIn.Unmarshal([]byte(body), m); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if !sameAnswer(t, m) {
			t.Errorf("the plain encoder declined %s", body)
		}
	}
}

func TestPlainJSONLeavesOtherAnswersToProtojson(t *testing.T) {
	kinds := plainType(t, "Kinds")
	for _, body := range []string{`{"at":"2024-01-01T00:00:00Z"}`, `{"child":{"meta":{"k":1}}}`} {
		m := dynamicpb.NewMessage(kinds)
		if err := protojson.Unmarshal([]byte(body), m); err != nil {
			t.Fatal(err)
		}
		if sameAnswer(t, m) {
			t.Errorf("the plain encoder wrote %s", body)
		}
		got, err := EncodeAnswer(m, true)
		if err != nil || string(got) != body {
			t.Errorf("EncodeAnswer wrote %s (%v), want %s", got, err, body)
		}
	}
	// A proto2 string is not checked for UTF-8 when it is set; protojson
	// refuses to write one that is not, and so does EncodeAnswer.
	old := dynamicpb.NewMessage(plainType(t, "Old"))
	old.Set(old.Descriptor().Fields().ByName("name"), protoreflect.ValueOfString("\xff"))
	if sameAnswer(t, old) {
		t.Error("the plain encoder wrote a string that is not UTF-8")
	}
	if _, err := EncodeAnswer(old, true); err == nil {
		t.Error("EncodeAnswer wrote a string that is not UTF-8")
	}
	ext := dynamicpb.NewMessage(plainType(t, "Extendable"))
	ext.Set(ext.Descriptor().Fields().ByName("n"), protoreflect.ValueOfInt32(1))
	if sameAnswer(t, ext) {
		t.Error("the plain encoder wrote a message that takes extensions")
	}
}

// FuzzPlainJSONDecode holds the plain decoder to protojson on any bytes.
func FuzzPlainJSONDecode(f *testing.F) {
	for _, seed := range []string{
		`{"b":true,"i32":-7,"s":"x\n\u00e9","rchild":[{"m_str":{"a":1}}],"by":"AA==","colour":"COLOUR_RED"}`,
		`{"m_i64":{"-1":{"oneChild":{"renamed":2}}},"m_bool":{"false":1},"ri64":["3",4],"rfl":[1.5e-3]}`,
		`{"i32":1,"i32":2}`, `{"s":"\ud800"}`, `{"db":1e400}`,
	} {
		f.Add([]byte(seed), false)
	}
	f.Add([]byte(`{"Grp":{"g":1},"Rg":[{"x":"a"}],"rclosed":[1],"children":{"a":{}}}`), true)
	f.Fuzz(func(t *testing.T, body []byte, old bool) {
		md := plainType(t, "Kinds")
		if old {
			md = plainType(t, "Old")
		}
		sameAsProtojson(t, md, body)
	})
}

// FuzzPlainJSONEncode holds the plain encoder to protojson on any message
// the bytes decode to, and the plain decoder to the message on what it
// wrote: what garmd writes, it reads back the same.
func FuzzPlainJSONEncode(f *testing.F) {
	kinds := plainType(f, "Kinds")
	for _, seed := range []string{
		`{"b":true,"i64":"-1","fl":0.1,"db":1e-7,"s":"\u0001\"","by":"AAE=","colour":5,"child":{"rchild":[{"u64":"1"}]}}`,
		`{"m_str":{"b":1,"a":2},"m_i32":{"2":"x","-1":"y"},"m_bool":{"true":1,"false":2},"m_u64":{"3":"AA=="},"oneS":"o"}`,
	} {
		m := dynamicpb.NewMessage(kinds)
		if err := protojson.Unmarshal([]byte(seed), m); err != nil {
			f.Fatal(err)
		}
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, false)
	}
	f.Add([]byte("\x12\x01\xff\x1a\x02\x20\x01"), true)
	f.Fuzz(func(t *testing.T, wire []byte, old bool) {
		md := kinds
		if old {
			md = plainType(t, "Old")
		}
		m := dynamicpb.NewMessage(md)
		if err := unmarshal(replyIn, wire, m); err != nil {
			return
		}
		if !sameAnswer(t, m) {
			return
		}
		plain, _ := appendPlainJSON(nil, m)
		back := dynamicpb.NewMessage(md)
		if decodePlainJSON(plain, back) && !sameMessage(back, m) {
			t.Fatalf("the plain decoder read back %v from %s, written from %v", back, plain, m)
		}
	})
}
