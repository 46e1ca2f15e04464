package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"testing"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"buf.build/go/protovalidate"
	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	"github.com/garm-dev/garm/protoc-gen-garm/compile"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// generateCases derives requests from a base request and the descriptor: at
// every object of the base, an unknown field, and for every field its
// absence, its JSON name, and candidate values — each kind's boundaries and
// wrong types, every rule's bound just met and just missed, each format's
// good and bad spellings — and every pair of a oneof's members together.
func generateCases(t *testing.T, md protoreflect.MessageDescriptor, base []byte) []corpusCase {
	g := &generator{base: decodeDocument(t, base)}
	g.message(md, nil, string(md.Name()))
	return g.cases
}

type generator struct {
	base  document
	cases []corpusCase
}

type candidate struct {
	value  any
	expect expectation
	reason string
}

func ok(v any) candidate                    { return candidate{value: v} }
func strict(reason string, v any) candidate { return candidate{v, stricter, reason} }
func lax(reason string, v any) candidate    { return candidate{v, laxer, reason} }

func (g *generator) add(where string, doc document, c candidate) {
	g.cases = append(g.cases, corpusCase{where: where, body: encodeDocument(doc), expect: c.expect, reason: c.reason})
}

func objectAt(doc document, path []any) map[string]any {
	at := doc
	for _, step := range path {
		switch s := step.(type) {
		case string:
			at = at.(map[string]any)[s]
		case int:
			at = at.([]any)[s]
		}
	}
	return at.(map[string]any)
}

func (g *generator) message(md protoreflect.MessageDescriptor, path []any, where string) {
	obj := objectAt(g.base, path)
	g.add(where+" with an unknown field", edited(g.base, path, func(o map[string]any) { o["zz_unknown"] = json.Number("1") }), ok(nil))
	groups := exclusiveGroups(md)
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		name := string(fd.Name())
		at := where + "." + name
		current, present := obj[name]
		if present {
			absent := ok(nil)
			if !fd.HasPresence() && !fd.IsList() && !fd.IsMap() {
				absent = strict("implicit-presence", nil)
			}
			g.add(at+" absent", edited(g.base, path, func(o map[string]any) { delete(o, name) }), absent)
			if json := fd.JSONName(); json != name {
				g.add(at+" as "+json, edited(g.base, path, func(o map[string]any) { o[json] = o[name]; delete(o, name) }), strict("json-name", nil))
			}
		}
		for _, c := range fieldCandidates(fd, current) {
			doc := edited(g.base, path, func(o map[string]any) {
				for _, other := range partners(groups, name) {
					delete(o, other)
				}
				o[name] = deepCopy(c.value)
			})
			g.add(fmt.Sprintf("%s = %s", at, encodeDocument(c.value)), doc, c)
		}
		if !present {
			continue
		}
		child := compile.ChildMessage(fd)
		next := append(slices.Clip(path), name)
		switch compile.ContainerOf(fd) {
		case planv1.Container_CONTAINER_MESSAGE:
			g.message(child, next, at)
		case planv1.Container_CONTAINER_LIST_OF_MESSAGES:
			if list, _ := current.([]any); len(list) > 0 {
				g.message(child, append(next, 0), at+"[0]")
			}
		case planv1.Container_CONTAINER_MAP_OF_MESSAGES:
			if m, _ := current.(map[string]any); len(m) > 0 {
				key := sortedKeys(m)[0]
				g.message(child, append(next, key), at+"["+key+"]")
			}
		}
	}
	for _, group := range groups {
		for i, a := range group {
			for _, b := range group[i+1:] {
				doc := edited(g.base, path, func(o map[string]any) {
					o[a], o[b] = sampleOf(md.Fields().ByName(protoreflect.Name(a))), sampleOf(md.Fields().ByName(protoreflect.Name(b)))
				})
				g.add(fmt.Sprintf("%s: %s and %s together", where, a, b), doc, ok(nil))
			}
		}
	}
}

// exclusiveGroups are a message's oneofs and protovalidate's message-level
// oneof rules: at most one member may be sent.
func exclusiveGroups(md protoreflect.MessageDescriptor) [][]string {
	var groups [][]string
	for i := range md.Oneofs().Len() {
		od := md.Oneofs().Get(i)
		if od.IsSynthetic() {
			continue
		}
		var names []string
		for j := range od.Fields().Len() {
			names = append(names, string(od.Fields().Get(j).Name()))
		}
		groups = append(groups, names)
	}
	rules, _ := protovalidate.ResolveMessageRules(md)
	for _, group := range rules.GetOneof() {
		groups = append(groups, group.GetFields())
	}
	return groups
}

func partners(groups [][]string, name string) []string {
	var out []string
	for _, group := range groups {
		if slices.Contains(group, name) {
			for _, other := range group {
				if other != name {
					out = append(out, other)
				}
			}
		}
	}
	return out
}

// sampleOf is a value of the field's type, for sending two oneof members.
func sampleOf(fd protoreflect.FieldDescriptor) any {
	switch {
	case fd.Message() != nil:
		return map[string]any{}
	case fd.Kind() == protoreflect.StringKind:
		return "sample"
	case fd.Kind() == protoreflect.BoolKind:
		return true
	}
	return json.Number("1")
}

func fieldCandidates(fd protoreflect.FieldDescriptor, current any) []candidate {
	rules, _ := protovalidate.ResolveFieldRules(fd)
	var cs []candidate
	switch {
	case fd.IsMap():
		cs = mapCandidates(fd, rules, current)
	case fd.IsList():
		cs = listCandidates(fd, rules, current)
	default:
		cs = valueCandidates(fd.Kind(), fd.Enum(), fd.Message(), rules)
	}
	if fd.Message() != nil && fd.Message().FullName() == "google.protobuf.Value" && !fd.IsList() && !fd.IsMap() {
		return append(cs, ok(nil)) // null is a Value
	}
	return append(cs, strict("non-canonical", nil)) // protojson reads null as absent
}

func listCandidates(fd protoreflect.FieldDescriptor, rules *validate.FieldRules, current any) []candidate {
	cs := []candidate{ok([]any{}), ok("x"), ok(map[string]any{}), ok(json.Number("1"))}
	for _, c := range valueCandidates(fd.Kind(), fd.Enum(), fd.Message(), rules.GetRepeated().GetItems()) {
		cs = append(cs, candidate{[]any{c.value}, c.expect, c.reason})
	}
	list, _ := current.([]any)
	if len(list) == 0 {
		return cs
	}
	counts := []uint64{2, 3, 4}
	if r := rules.GetRepeated(); r != nil {
		for _, n := range []uint64{r.GetMinItems(), r.GetMaxItems()} {
			counts = append(counts, n, n+1)
			if n > 0 {
				counts = append(counts, n-1)
			}
		}
	}
	for _, n := range counts {
		same, distinct := make([]any, n), make([]any, n)
		for i := range same {
			same[i] = list[0]
			distinct[i] = list[i%len(list)]
			if s, isString := list[0].(string); isString && fd.Kind() == protoreflect.StringKind {
				distinct[i] = s + strings.Repeat("z", i)
			}
		}
		cs = append(cs, ok(same), ok(distinct))
	}
	return cs
}

func mapCandidates(fd protoreflect.FieldDescriptor, rules *validate.FieldRules, current any) []candidate {
	cs := []candidate{ok(map[string]any{}), ok([]any{}), ok("x")}
	keyKind := fd.MapKey().Kind()
	keys := map[protoreflect.Kind][]string{protoreflect.StringKind: {"a", "b", "c", "d", "e", "f"}, protoreflect.BoolKind: {"true", "false"}}[keyKind]
	if keys == nil {
		keys = []string{"1", "2", "3", "4", "5", "6"}
	}
	sampleKey, sampleValue := keys[0], sampleOf(fd.MapValue())
	if m, _ := current.(map[string]any); len(m) > 0 {
		sampleKey = sortedKeys(m)[0]
		sampleValue = m[sampleKey]
	}
	for _, c := range keyCandidates(keyKind, rules.GetMap().GetKeys()) {
		cs = append(cs, candidate{map[string]any{c.value.(string): deepCopy(sampleValue)}, c.expect, c.reason})
	}
	v := fd.MapValue()
	for _, c := range valueCandidates(v.Kind(), v.Enum(), v.Message(), rules.GetMap().GetValues()) {
		cs = append(cs, candidate{map[string]any{sampleKey: c.value}, c.expect, c.reason})
	}
	for n := 1; n <= len(keys); n++ {
		m := map[string]any{}
		for _, k := range keys[:n] {
			m[k] = deepCopy(sampleValue)
		}
		cs = append(cs, ok(m))
	}
	return cs
}

func keyCandidates(kind protoreflect.Kind, rules *validate.FieldRules) []candidate {
	switch kind {
	case protoreflect.StringKind:
		cs := []candidate{ok(""), ok("a"), ok("abc"), ok("A"), ok("a-b"), ok("é")}
		for _, c := range stringCandidates(rules.GetString()) {
			if _, isString := c.value.(string); isString {
				cs = append(cs, c)
			}
		}
		return cs
	case protoreflect.BoolKind:
		return []candidate{ok("true"), ok("false"), ok("True"), ok("1"), ok("")}
	}
	var cs []candidate
	for _, n := range integerProbes(kind, rules) {
		cs = append(cs, ok(n.String()))
	}
	return append(cs, strict("non-canonical", "+1"), strict("non-canonical", "01"), strict("non-canonical", "-0"),
		ok("x"), ok("1.0"), ok(" 1"), ok(""))
}

// valueCandidates are values for one value of a kind under its rules.
func valueCandidates(kind protoreflect.Kind, enum protoreflect.EnumDescriptor, message protoreflect.MessageDescriptor, rules *validate.FieldRules) []candidate {
	switch kind {
	case protoreflect.BoolKind:
		return []candidate{ok(true), ok(false), ok("true"), ok(json.Number("1"))}
	case protoreflect.StringKind:
		return stringCandidates(rules.GetString())
	case protoreflect.BytesKind:
		return []candidate{ok(""), ok("AQID"), ok("AQ=="), ok("AQ"), ok("AQI="), ok("AQI"), ok("-_8"), ok("+/8="), ok("-_8="),
			ok("+_8="), ok("!!!!"), ok("A"), ok("AQ="), strict("non-canonical", "AQ\nID"), ok(json.Number("5"))}
	case protoreflect.EnumKind:
		var cs []candidate
		for i := range enum.Values().Len() {
			v := enum.Values().Get(i)
			if v.Number() == 0 {
				cs = append(cs, strict("enum-zero", string(v.Name())))
			} else {
				cs = append(cs, ok(string(v.Name())))
			}
		}
		return append(cs, ok("NOPE"), ok(strings.ToLower(string(enum.Values().Get(1).Name()))), strict("enum-number", json.Number("1")))
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return floatCandidates(kind, rules)
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return messageCandidates(message, rules)
	}
	return integerCandidates(kind, rules)
}

func integerRangeOf(kind protoreflect.Kind) (*big.Int, *big.Int) {
	switch kind {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return big.NewInt(math.MinInt32), big.NewInt(math.MaxInt32)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return big.NewInt(0), big.NewInt(math.MaxUint32)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return big.NewInt(math.MinInt64), big.NewInt(math.MaxInt64)
	}
	return big.NewInt(0), new(big.Int).SetUint64(math.MaxUint64)
}

// ruleValues are the numbers a numeric rules message names: const, bounds,
// in and not_in.
func ruleValues(rules *validate.FieldRules) []protoreflect.Value {
	if rules == nil {
		return nil
	}
	m := rules.ProtoReflect()
	fd := m.WhichOneof(m.Descriptor().Oneofs().ByName("type"))
	if fd == nil {
		return nil
	}
	typed := m.Get(fd).Message()
	var out []protoreflect.Value
	typed.Range(func(f protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch f.Name() {
		case "const", "gt", "gte", "lt", "lte":
			out = append(out, v)
		case "in", "not_in":
			for i := range v.List().Len() {
				out = append(out, v.List().Get(i))
			}
		}
		return true
	})
	return out
}

// integerProbes are the integers worth trying: around zero, the type's
// limits and every number the rules name, each with its neighbours.
func integerProbes(kind protoreflect.Kind, rules *validate.FieldRules) []*big.Int {
	lo, hi := integerRangeOf(kind)
	points := []*big.Int{big.NewInt(0), big.NewInt(7), lo, hi}
	for _, v := range ruleValues(rules) {
		switch x := v.Interface().(type) {
		case int32:
			points = append(points, big.NewInt(int64(x)))
		case int64:
			points = append(points, big.NewInt(x))
		case uint32:
			points = append(points, new(big.Int).SetUint64(uint64(x)))
		case uint64:
			points = append(points, new(big.Int).SetUint64(x))
		}
	}
	var probes []*big.Int
	seen := map[string]bool{}
	for _, p := range points {
		for d := int64(-1); d <= 1; d++ {
			n := new(big.Int).Add(p, big.NewInt(d))
			if !seen[n.String()] {
				seen[n.String()] = true
				probes = append(probes, n)
			}
		}
	}
	return probes
}

func integerCandidates(kind protoreflect.Kind, rules *validate.FieldRules) []candidate {
	var cs []candidate
	wide := kind == protoreflect.Int64Kind || kind == protoreflect.Sint64Kind || kind == protoreflect.Sfixed64Kind ||
		kind == protoreflect.Uint64Kind || kind == protoreflect.Fixed64Kind
	for _, n := range integerProbes(kind, rules) {
		if wide {
			cs = append(cs, ok(n.String()))
		} else {
			cs = append(cs, ok(json.Number(n.String())))
		}
	}
	if wide {
		return append(cs, strict("int64-number", json.Number("7")), strict("int64-number", json.Number("9007199254740993")),
			strict("non-canonical", "1e1"), strict("non-canonical", "-0"), strict("non-canonical", "7.0"),
			ok("07"), ok(" 7"), ok("x"), ok("7.5"), ok(""), ok(true))
	}
	return append(cs, strict("non-canonical", "7"), ok(json.Number("7.0")), ok(json.Number("1e1")), ok(json.Number("7.5")),
		ok(json.Number("-0")), ok("x"), ok(true), ok([]any{}))
}

func floatCandidates(kind protoreflect.Kind, rules *validate.FieldRules) []candidate {
	max, huge := "1.7976931348623157e308", "1e309"
	if kind == protoreflect.FloatKind {
		max, huge = "3.4028235e38", "1e39"
	}
	cs := []candidate{ok(json.Number("0")), ok(json.Number("1.5")), ok(json.Number("-2.25")), ok(json.Number("7")), ok(json.Number("1e-7")),
		ok(json.Number(max)), ok(json.Number("-" + max)), ok(json.Number(huge)), ok(json.Number("-" + huge)),
		strict("non-canonical", "1.5"), strict("non-finite", "NaN"), strict("non-finite", "Infinity"), strict("non-finite", "-Infinity"),
		ok("x"), ok(true)}
	for _, v := range ruleValues(rules) {
		f := v.Float()
		delta := max1(math.Abs(f)) * 1e-3
		for _, x := range []float64{f - delta, f, f + delta} {
			cs = append(cs, ok(json.Number(strconv.FormatFloat(x, 'g', -1, 64))))
		}
	}
	return cs
}

func max1(f float64) float64 { return math.Max(f, 1) }

// labels of the lengths a hostname rule turns on.
var (
	label63 = strings.Repeat("a", 63)
	name253 = label63 + "." + label63 + "." + label63 + "." + strings.Repeat("b", 61)
	name254 = label63 + "." + label63 + "." + label63 + "." + strings.Repeat("b", 62)
)

func stringCandidates(r *validate.StringRules) []candidate {
	wrong := []candidate{ok(json.Number("1")), ok(true), ok(map[string]any{}), ok([]any{})}
	switch {
	case r.GetEmail():
		return append(wrong, ok("a@b.co"), ok("first.last+tag@example.com"), ok(".a@b.co"), ok("a@b"), ok("a@"), ok("@b.co"),
			ok("a b@c.d"), ok("a@b_c.d"), ok("a@-b.com"), ok("a@b.c-"), ok("é@b.co"), ok(""))
	case r.GetHostname():
		return append(wrong, ok("example.com"), ok("example.com."), ok("a-b.c9"), ok("localhost"), ok("-a.com"), ok("a-.com"),
			ok("a..b"), ok("123"), ok("1.2.3.4"), ok("a.123"), ok("a.1b"), ok("1-2"), ok("exa mple.com"), ok(label63+".com"),
			ok(label63+"a.com"), ok(name253), ok(name254), ok(name253+"."), ok(name254+"."), ok(".com"), ok(""), ok("é.com"))
	case r.GetUuid():
		return append(wrong, ok("123e4567-e89b-12d3-a456-426614174000"), ok("123E4567-E89B-12D3-A456-426614174000"),
			ok("123e4567e89b12d3a456426614174000"), ok("123e4567-e89b-12d3-a456-42661417400g"), ok(""))
	case r.GetTuuid():
		return append(wrong, ok("123e4567e89b12d3a456426614174000"), ok("123e4567-e89b-12d3-a456-426614174000"),
			ok("123e4567e89b12d3a45642661417400"), ok(""))
	case r.GetUlid():
		return append(wrong, ok("01ARZ3NDEKTSV4RRFFQ69G5FAV"), ok("81ARZ3NDEKTSV4RRFFQ69G5FAV"), ok("01ARZ3NDEKTSV4RRFFQ69G5FAI"),
			ok("01ARZ3NDEKTSV4RRFFQ69G5FA"), ok("01arz3ndektsv4rrffq69g5fav"), ok(""))
	case r.GetIpv4():
		return append(wrong, ok("1.2.3.4"), ok("255.255.255.255"), ok("0.0.0.0"), ok("256.1.1.1"), ok("01.1.1.1"), ok("1.2.3"),
			ok("1.2.3.4.5"), ok("a.b.c.d"), ok(" 1.2.3.4"), ok(""))
	case r.GetIpv6():
		return append(wrong, ok("::1"), ok("2001:db8::1"), ok("fe80::1%eth0"), ok("::ffff:1.2.3.4"), ok(""),
			lax("format-only", "not an ip"), lax("format-only", "1.2.3.4"), lax("format-only", "2001:db8::g"))
	case r.GetUri():
		return append(wrong, ok("https://example.com/a?b#c"), ok("urn:isbn:0451450523"), ok(""),
			lax("format-only", "not a uri"), lax("format-only", "//example.com/x"), lax("format-only", "/relative"))
	}
	cs := append(wrong, ok(""), ok("a"), ok("ab"), ok("abc"), ok("abcdefgh"), ok("abcdefghi"), ok("ééé"), ok("x<y"), ok("SKU-7.x"),
		ok("SKU-8.x"), ok("sku-7.x"), ok("SKU-7.y"), ok("gold"), ok("silver"), ok("bronze"), ok("v1"), ok("v2"), ok("a-b"), ok("1ab"),
		ok("ab-"), ok("Ab"), ok("é"), ok("a\nb"))
	var lengths []uint64
	if r.HasLen() {
		lengths = append(lengths, r.GetLen())
	}
	if r.HasMinLen() {
		lengths = append(lengths, r.GetMinLen())
	}
	if r.HasMaxLen() {
		lengths = append(lengths, r.GetMaxLen())
	}
	for _, n := range lengths {
		for _, l := range []uint64{n - 1, n, n + 1} {
			if l <= n+1 && l < 1<<20 {
				cs = append(cs, ok(strings.Repeat("a", int(l))), ok(strings.Repeat("é", int(l))))
			}
		}
	}
	for _, v := range append(append(r.GetIn(), r.GetNotIn()...), r.GetConst()) {
		cs = append(cs, ok(v), ok(v+"!"))
	}
	return cs
}

func messageCandidates(md protoreflect.MessageDescriptor, rules *validate.FieldRules) []candidate {
	wrong := []candidate{ok("x"), ok(json.Number("1")), ok(true)}
	switch md.FullName() {
	case "google.protobuf.Timestamp":
		return append(wrong[1:], lax("format-only", "x"), ok("2024-05-06T07:08:09Z"), ok("2024-05-06T07:08:09.123456789Z"), ok("2024-05-06T07:08:09+02:00"),
			ok("0001-01-01T00:00:00Z"), ok("9999-12-31T23:59:59.999999999Z"), ok(map[string]any{}),
			lax("format-only", "2024-05-06T07:08:09.1234567891Z"), lax("format-only", "2024-02-30T00:00:00Z"),
			lax("format-only", "not a time"), lax("format-only", "2024-05-06 07:08:09Z"), lax("format-only", "2024-05-06t07:08:09z"))
	case "google.protobuf.Duration":
		return append(wrong, ok("1s"), ok("-1.5s"), ok("0s"), ok("0.000000001s"), ok("1.000s"), ok("315576000000s"),
			ok("-315576000000.999999999s"), ok("315576000001s"), ok("1.0000000001s"), ok("1"), ok("1 s"), ok("01s"), ok(""),
			strict("non-canonical", ".5s"), strict("non-canonical", "+1s"), strict("non-canonical", "1.s"), strict("non-canonical", "-.5s"))
	case "google.protobuf.Struct":
		return append(wrong, ok(map[string]any{"a": json.Number("1"), "b": []any{nil}}), ok(map[string]any{}), ok([]any{}))
	case "google.protobuf.Value":
		return []candidate{ok(json.Number("1")), ok("x"), ok(true), ok([]any{json.Number("1"), map[string]any{}}), ok(map[string]any{"a": nil})}
	case "google.protobuf.ListValue":
		return append(wrong, ok([]any{}), ok([]any{json.Number("1"), "a", nil}), ok(map[string]any{}))
	case "google.protobuf.Empty":
		return append(wrong, ok(map[string]any{}), ok(map[string]any{"a": json.Number("1")}), ok([]any{}))
	case "google.protobuf.Any":
		return append(wrong, ok(map[string]any{}), ok(map[string]any{"@type": "type.googleapis.com/google.protobuf.Duration", "value": "1s"}),
			ok(map[string]any{"@type": json.Number("1")}),
			lax("any-resolution", map[string]any{"@type": "type.googleapis.com/nope.Nope"}),
			lax("any-resolution", map[string]any{"value": "1s"}))
	case "google.protobuf.FieldMask":
		return append(wrong[:1], ok("a,b.cD"), ok(""), ok([]any{}), lax("field-mask", "a_b"))
	case "garm.card.v1.Card":
		return append(wrong, ok(map[string]any{}), ok(map[string]any{"kind": "KIND_START", "title": "t"}),
			strict("enum-zero", map[string]any{"kind": "KIND_UNSPECIFIED"}), ok(map[string]any{"nope": json.Number("1")}),
			ok(map[string]any{"title": json.Number("5")}),
			ok(map[string]any{"body": []any{map[string]any{"text": map[string]any{}, "divider": map[string]any{}}}}),
			ok(map[string]any{"body": []any{map[string]any{"section": map[string]any{"elements": []any{map[string]any{"text": map[string]any{"text": "deep"}}}}}}}),
			lax("recursion-cut", map[string]any{"body": []any{map[string]any{"section": map[string]any{"elements": []any{map[string]any{"bogus": json.Number("1")}}}}}}))
	}
	if kind, ok := wrapped(md); ok {
		return valueCandidates(kind, nil, nil, rules)
	}
	empty := ok(map[string]any{})
	for i := range md.Fields().Len() {
		if fd := md.Fields().Get(i); !fd.HasPresence() && !fd.IsList() && !fd.IsMap() {
			empty = strict("implicit-presence", map[string]any{})
		}
	}
	return append(wrong, empty, ok([]any{}))
}

func wrapped(md protoreflect.MessageDescriptor) (protoreflect.Kind, bool) {
	if strings.HasPrefix(string(md.FullName()), "google.protobuf.") && strings.HasSuffix(string(md.Name()), "Value") &&
		md.Fields().Len() == 1 && md.Fields().Get(0).Name() == "value" {
		return md.Fields().Get(0).Kind(), true
	}
	return 0, false
}
