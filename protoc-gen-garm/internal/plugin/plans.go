package plugin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	"github.com/garm-dev/garm/protoc-gen-garm/compile"
	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/encoding/protojson"
)

// planFile is one plan file to write.
type planFile struct {
	name    string
	content []byte
}

// buildPlanFiles precomputes the plan file of every tool-bearing package of
// the model. It writes nothing, so a failure leaves no partial output.
func buildPlanFiles(model *compile.Model) ([]planFile, error) {
	var out []planFile
	for _, pkg := range model.Packages {
		if len(pkg.Tools) == 0 {
			continue
		}
		plan, err := compile.PlanPackage(pkg)
		if err != nil {
			return nil, err
		}
		if plan.Rules, err = compile.PlanRules(model, pkg); err != nil {
			return nil, err
		}
		content, err := MarshalPlan(plan)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", pkg.Name, err)
		}
		out = append(out, planFile{name: PlanFileName(string(pkg.Name)), content: content})
	}
	return out, nil
}

// PlanFileName is where a proto package's plan file goes:
// "<package path>/<package, dots as underscores>.garm.json".
func PlanFileName(pkg string) string {
	return strings.ReplaceAll(pkg, ".", "/") + "/" + strings.ReplaceAll(pkg, ".", "_") + ".garm.json"
}

// MarshalPlan is a plan as indented protojson, the same bytes from every
// build (protojson's own spacing is deliberately unstable, so the JSON is
// re-indented here), with arrays of scalars kept on one line so that a
// changed path or compartment list reads as a one-line difference.
func MarshalPlan(plan *planv1.PackagePlan) ([]byte, error) {
	raw, err := protojson.Marshal(plan)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := indentJSON(&out, raw); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// indentJSON writes src with two-space indentation, object members one per
// line in their original order, and arrays that hold no object or array on
// one line.
func indentJSON(out *bytes.Buffer, src []byte) error {
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	v, err := readValue(dec)
	if err != nil {
		return err
	}
	return writeIndented(out, v, "")
}

// jsonObject keeps an object's members in the order they were read.
type jsonObject []jsonMember

type jsonMember struct {
	key   string
	value any
}

// readValue reads one JSON value: a jsonObject, a []any or a scalar.
func readValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		obj := jsonObject{}
		for dec.More() {
			key, err := dec.Token()
			if err != nil {
				return nil, err
			}
			value, err := readValue(dec)
			if err != nil {
				return nil, err
			}
			obj = append(obj, jsonMember{key.(string), value})
		}
		_, err := dec.Token()
		return obj, err
	case json.Delim('['):
		arr := []any{}
		for dec.More() {
			value, err := readValue(dec)
			if err != nil {
				return nil, err
			}
			arr = append(arr, value)
		}
		_, err := dec.Token()
		return arr, err
	}
	return tok, nil
}

func writeIndented(out *bytes.Buffer, v any, indent string) error {
	switch v := v.(type) {
	case jsonObject:
		return writeObject(out, v, indent)
	case []any:
		return writeArray(out, v, indent)
	default:
		return writeScalar(out, v)
	}
}

func writeObject(out *bytes.Buffer, obj jsonObject, indent string) error {
	return writeLines(out, "{", "}", indent, len(obj), func(i int, inner string) error {
		if err := writeScalar(out, obj[i].key); err != nil {
			return err
		}
		out.WriteString(": ")
		return writeIndented(out, obj[i].value, inner)
	})
}

func writeArray(out *bytes.Buffer, arr []any, indent string) error {
	for _, e := range arr {
		switch e.(type) {
		case jsonObject, []any:
			return writeLines(out, "[", "]", indent, len(arr), func(i int, inner string) error {
				return writeIndented(out, arr[i], inner)
			})
		}
	}
	out.WriteByte('[')
	for i, e := range arr {
		if i > 0 {
			out.WriteString(", ")
		}
		if err := writeScalar(out, e); err != nil {
			return err
		}
	}
	out.WriteByte(']')
	return nil
}

// writeLines writes n items between open and close, one per line at
// indent plus two spaces, separated by commas; an empty one is open+close.
func writeLines(out *bytes.Buffer, open, close, indent string, n int, item func(i int, inner string) error) error {
	if n == 0 {
		out.WriteString(open + close)
		return nil
	}
	out.WriteString(open + "\n")
	inner := indent + "  "
	for i := range n {
		out.WriteString(inner)
		if err := item(i, inner); err != nil {
			return err
		}
		if i < n-1 {
			out.WriteByte(',')
		}
		out.WriteByte('\n')
	}
	out.WriteString(indent + close)
	return nil
}

func writeScalar(out *bytes.Buffer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	out.Truncate(out.Len() - 1) // Encode's newline
	return nil
}

func writePlanFiles(gen *protogen.Plugin, files []planFile) error {
	for _, f := range files {
		if _, err := gen.NewGeneratedFile(f.name, "").Write(f.content); err != nil {
			return err
		}
	}
	return nil
}
