package codec

import (
	"testing"

	"google.golang.org/protobuf/types/dynamicpb"
)

// benchBody is a small request of the size agents send: a few scalars, an
// enum, a list and a nested message.
const benchBody = `{"s":"customer 42","i64":"1234567","db":2.5,"colour":"COLOUR_RED","rs":["a","b"],"child":{"b":true,"i32":7}}`

// BenchmarkJSONRequest decodes benchBody the plain way and protojson's,
// each into a new dynamic message as DecodeRequest does (decision 0078).
func BenchmarkJSONRequest(b *testing.B) {
	md := plainType(b, "Kinds")
	body := []byte(benchBody)
	b.Run("plain", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !decodePlainJSON(body, dynamicpb.NewMessage(md)) {
				b.Fatal("declined")
			}
		}
	})
	b.Run("protojson", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := jsonIn.Unmarshal(body, fresh{dynamicpb.NewMessage(md)}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkJSONAnswer writes the same message as an answer the plain way
// and protojson's (compacted, as EncodeAnswer did before).
func BenchmarkJSONAnswer(b *testing.B) {
	m := dynamicpb.NewMessage(plainType(b, "Kinds"))
	if err := jsonIn.Unmarshal([]byte(benchBody), m); err != nil {
		b.Fatal(err)
	}
	b.Run("plain", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := appendPlainJSON(make([]byte, 0, answerGuess), m); !ok {
				b.Fatal("declined")
			}
		}
	})
	b.Run("protojson", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			out, err := jsonOut.MarshalAppend(make([]byte, 0, answerGuess), m)
			if err != nil {
				b.Fatal(err)
			}
			compactInPlace(out)
		}
	})
}
