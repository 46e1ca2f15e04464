package codec

import (
	"bytes"
	"encoding/json"
	"testing"
)

// The answer's whitespace is taken out in place; what remains must be what
// encoding/json's Compact makes of the same text, whitespace inside strings
// (escaped quotes and backslashes among them) kept as it is.
func TestCompactInPlaceAgreesWithEncodingJSON(t *testing.T) {
	for _, text := range []string{
		`{}`,
		`{"a":1, "b":[1, 2, {"c":"d"}]}`,
		"{ \"a\" :\t\"x, \\\"y\\\": z \" ,\r\n \"b\" : true }",
		`{"path":"C:\\ dir\\", "next":" \" , "}`,
		`{"s":"\u00e9 \n", "n":null, "f":-1.5e+3}`,
		`[ ]`,
	} {
		var want bytes.Buffer
		if err := json.Compact(&want, []byte(text)); err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		if got := compactInPlace([]byte(text)); string(got) != want.String() {
			t.Errorf("compactInPlace(%s) = %s, want %s", text, got, want.String())
		}
	}
}
