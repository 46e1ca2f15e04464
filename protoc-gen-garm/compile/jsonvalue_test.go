package compile

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// stdDecode and stdEncode are what decodeJSON and encodeJSON must give:
// encoding/json's own.
func stdDecode(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errTrailing
	}
	return v, nil
}

var errTrailing = json.Unmarshal([]byte("x"), new(any))

func stdEncode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// sameJSON fails t unless decodeJSON and encodeJSON agree with
// encoding/json on raw.
func sameJSON(t *testing.T, raw []byte) {
	t.Helper()
	want, wantErr := stdDecode(raw)
	got, gotErr := decodeJSON(raw)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("%q: encoding/json %v, decodeJSON %v", raw, wantErr, gotErr)
	}
	if wantErr != nil {
		return
	}
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("%q: decoded %#v, encoding/json %#v", raw, got, want)
	}
	wantOut, wantErr := stdEncode(want)
	gotOut, gotErr := encodeJSON(got)
	if (wantErr == nil) != (gotErr == nil) || !bytes.Equal(wantOut, gotOut) {
		t.Fatalf("%q: encoded %q (%v), encoding/json %q (%v)", raw, gotOut, gotErr, wantOut, wantErr)
	}
}

var jsonSeeds = []string{
	`{"type":"object","properties":{"a":{"type":"string","maxLength":64}},"required":["a"]}`,
	`{"b":1,"a":[1,2.5e3,-0,true,false,null,"x"],"c":{}}`,
	`{"a":1,"a":2}`,
	`"\u2028\u2029 <>& \u0001\b\f\n\r\t \" \\ \ud800 é"`,
	"\"\xff\xfe raw invalid\"",
	`{"\u00e9":1,"e":2,"z":3,"A":4}`,
	`[]`, `{}`, `[[]]`, `1`, `-1.5E+10`, `null`, ` {"a":1} `,
	`{"a":1}}`, `{"a":1}]`, `{"a":1} x`, `{"a":1}{}`, `{"a":}`, `{"a"1}`, `[1,]`, `{`, ``, `01`, `1.`, `"`, `[1 2]`,
}

func TestSchemaJSONIsEncodingJSON(t *testing.T) {
	for _, s := range jsonSeeds {
		sameJSON(t, []byte(s))
	}
	// encoding/json's nesting limit, either side of it.
	for _, depth := range []int{maxDepth, maxDepth + 1} {
		sameJSON(t, []byte(strings.Repeat("[", depth)+strings.Repeat("]", depth)))
		sameJSON(t, []byte(strings.Repeat(`{"a":`, depth)+"1"+strings.Repeat("}", depth)))
	}
}

func FuzzSchemaJSONIsEncodingJSON(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { sameJSON(t, raw) })
}
