package compile

import (
	"bytes"
	"strings"
	"testing"

	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
)

// sameWhenCanonical fails t unless a value canonical accepts is what
// encodeJSON writes of it decoded, byte for byte, and is what
// encoding/json writes too.
func sameWhenCanonical(t *testing.T, s string) {
	t.Helper()
	if !canonical(s) {
		return
	}
	v, err := decodeJSONString(s)
	if err != nil {
		t.Fatalf("%q is canonical and does not decode: %v", s, err)
	}
	out, err := encodeJSON(v)
	if err != nil || string(out) != s {
		t.Fatalf("%q is canonical and encodes as %q (%v)", s, out, err)
	}
	if std, err := stdEncode(v); err != nil || !bytes.Equal(std, out) {
		t.Fatalf("%q: encoding/json writes %q (%v)", s, std, err)
	}
}

var canonicalSeeds = []string{
	`{"a":1,"b":[true,false,null],"c":{"d":"é"}}`,
	`{"b":1,"a":2}`, `{"a":1,"a":1}`, `{ "a":1}`, `{"a":"\n"}`, `{"a":"\u2028"}`, "{\"a\":\"\u2028\"}",
	"\"\xff\"", `-0.5e+3`, `01`, `[1,]`, `{"a":1}x`, `"<>&"`, `[]`, `{}`, ``, `{"":0}`,
}

func TestACanonicalValueEncodesAsItself(t *testing.T) {
	for _, s := range append(canonicalSeeds, jsonSeeds...) {
		sameWhenCanonical(t, s)
	}
	for _, s := range []string{`{"a":1,"b":[true,false,null],"c":{"d":"é"}}`, `{"":0}`, `-0.5e+3`, `"<>&"`} {
		if !canonical(s) {
			t.Errorf("%q is canonical; canonical says not", s)
		}
	}
	for _, s := range []string{`{"b":1,"a":2}`, `{"a":1,"a":1}`, `{ "a":1}`, `{"a":"\n"}`, "{\"a\":\"\u2028\"}", "\"\xff\"", `01`, `{"a":1}x`} {
		if canonical(s) {
			t.Errorf("%q is not canonical; canonical says it is", s)
		}
	}
	deep := strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth)
	if canonical(deep) {
		t.Error("a value at the nesting limit is canonical")
	}
}

func FuzzACanonicalValueEncodesAsItself(f *testing.F) {
	for _, s := range append(canonicalSeeds, jsonSeeds...) {
		f.Add(s)
	}
	f.Fuzz(sameWhenCanonical)
}

// sameAssembly fails t unless assembling plan with canonical fragments
// placed as their bytes gives what decoding every fragment gives, for
// every subset of its rules shown (up to 2^6).
func sameAssembly(t *testing.T, plan *planv1.MessagePlan) {
	t.Helper()
	n := min(len(plan.GetRules()), 6)
	for mask := 0; mask < 1<<n; mask++ {
		shown := func(i int, _ *planv1.FieldRule) bool { return i >= n || mask&(1<<i) != 0 }
		want, wantErr := assembleSchema(plan, shown, false)
		got, gotErr := assembleSchema(plan, shown, true)
		if (wantErr == nil) != (gotErr == nil) || wantErr != nil && wantErr.Error() != gotErr.Error() || !bytes.Equal(want, got) {
			t.Fatalf("shown %b: placed %q (%v), decoded %q (%v)", mask, got, gotErr, want, wantErr)
		}
	}
}

func fuzzPlan(shell, a, b, c string, containers uint8) *planv1.MessagePlan {
	container := func(shift uint8) planv1.Container { return planv1.Container(containers>>shift&3 + 1) }
	return &planv1.MessagePlan{
		Message: "f.v1.M",
		Schema:  shell,
		Rules: []*planv1.FieldRule{
			{Path: "a", Schema: a, Container: container(0), Required: containers&0x40 != 0},
			{Path: "a.x", Schema: b, Container: container(2)},
			{Path: "b", Schema: c, Container: container(4), Required: true},
			{Path: "a.y", Schema: b, Container: planv1.Container_CONTAINER_LEAF, Required: containers&0x80 != 0},
		},
	}
}

func TestPlacingCanonicalFragmentsAssemblesWhatDecodingThemDoes(t *testing.T) {
	shell := `{"additionalProperties":false,"allOf":[{"not":{"required":["a","b"]}},{"anyOf":[{"required":["a"]},{"required":["b"]}]}],"description":"M.","type":"object"}`
	obj := `{"additionalProperties":false,"allOf":[{"not":{"required":["x","y"]}}],"type":"object"}`
	list := `{"items":{"additionalProperties":false,"type":"object"},"type":"array"}`
	mapOf := `{"additionalProperties":{"additionalProperties":false,"type":"object"},"type":"object"}`
	for _, shape := range []string{shell, ` {"type":"object"}`, `{"type":"object","description":"x"}`, `[]`, `{`} {
		for _, a := range []string{obj, list, mapOf, `{"type":"string"}`, `{"items":false}`, `"x"`} {
			for containers := range 256 {
				sameAssembly(t, fuzzPlan(shape, a, `{"description":"\u00e9 <b>","type":"string"}`, `{"maxLength":64,"type":"string"}`, uint8(containers)))
			}
		}
	}
	sameAssembly(t, &planv1.MessagePlan{Message: "f.v1.Opaque", Schema: shell})
}

func FuzzPlacingCanonicalFragmentsAssemblesWhatDecodingThemDoes(f *testing.F) {
	f.Add(`{"additionalProperties":false,"type":"object"}`, `{"additionalProperties":false,"type":"object"}`, `{"type":"string"}`, `{"items":{"type":"object"},"type":"array"}`, uint8(0x46))
	f.Fuzz(func(t *testing.T, shell, a, b, c string, containers uint8) {
		sameAssembly(t, fuzzPlan(shell, a, b, c, containers))
	})
}
