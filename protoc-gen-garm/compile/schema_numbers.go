package compile

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"

	"github.com/invopop/jsonschema"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// numericRules are the rules every numeric rules message shares, read by
// field name so that the twelve of them are one code path.
type numericRules struct {
	constant            *protoreflect.Value
	lower, upper        *bound
	in, notIn, examples []protoreflect.Value
}

type bound struct {
	value     protoreflect.Value
	inclusive bool
}

func readNumericRules(m protoreflect.Message) numericRules {
	var r numericRules
	if m == nil {
		return r
	}
	fields := m.Descriptor().Fields()
	get := func(name protoreflect.Name) *protoreflect.Value {
		fd := fields.ByName(name)
		if fd == nil || !m.Has(fd) {
			return nil
		}
		v := m.Get(fd)
		return &v
	}
	list := func(name protoreflect.Name) []protoreflect.Value {
		fd := fields.ByName(name)
		if fd == nil {
			return nil
		}
		l := m.Get(fd).List()
		out := make([]protoreflect.Value, l.Len())
		for i := range out {
			out[i] = l.Get(i)
		}
		return out
	}
	r.constant = get("const")
	if v := get("gt"); v != nil {
		r.lower = &bound{*v, false}
	} else if v := get("gte"); v != nil {
		r.lower = &bound{*v, true}
	}
	if v := get("lt"); v != nil {
		r.upper = &bound{*v, false}
	} else if v := get("lte"); v != nil {
		r.upper = &bound{*v, true}
	}
	r.in, r.notIn, r.examples = list("in"), list("not_in"), list("example")
	return r
}

func bigOf(v protoreflect.Value) *big.Int {
	switch x := v.Interface().(type) {
	case int32:
		return big.NewInt(int64(x))
	case int64:
		return big.NewInt(x)
	case uint32:
		return new(big.Int).SetUint64(uint64(x))
	case uint64:
		return new(big.Int).SetUint64(x)
	}
	panic(fmt.Sprintf("not an integer: %T", v.Interface()))
}

// integerRange is the range of an integer kind.
func integerRange(kind protoreflect.Kind) interval {
	switch kind {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return interval{big.NewInt(math.MinInt32), big.NewInt(math.MaxInt32)}
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return interval{big.NewInt(0), big.NewInt(math.MaxUint32)}
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return interval{big.NewInt(math.MinInt64), big.NewInt(math.MaxInt64)}
	default:
		return interval{big.NewInt(0), new(big.Int).SetUint64(math.MaxUint64)}
	}
}

func is64Bit(kind protoreflect.Kind) bool {
	switch kind {
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind,
		protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return true
	}
	return false
}

// integerBounds is the set of integers of the type's range that gt/gte/lt/lte
// admit: their intersection, or — when the upper bound is below the lower,
// which protovalidate reads as "outside" — their union.
func integerBounds(r numericRules, full interval) ([]interval, error) {
	one := big.NewInt(1)
	lo, hi := full.lo, full.hi
	if r.lower != nil {
		lo = bigOf(r.lower.value)
		if !r.lower.inclusive {
			lo = new(big.Int).Add(lo, one)
		}
	}
	if r.upper != nil {
		hi = bigOf(r.upper.value)
		if !r.upper.inclusive {
			hi = new(big.Int).Sub(hi, one)
		}
	}
	clamp := func(parts ...interval) []interval {
		var out []interval
		for _, p := range parts {
			if p.lo.Cmp(full.lo) < 0 {
				p.lo = full.lo
			}
			if p.hi.Cmp(full.hi) > 0 {
				p.hi = full.hi
			}
			if p.lo.Cmp(p.hi) <= 0 {
				out = append(out, p)
			}
		}
		return out
	}
	var set []interval
	if r.lower != nil && r.upper != nil && bigOf(r.upper.value).Cmp(bigOf(r.lower.value)) < 0 {
		set = clamp(interval{full.lo, hi}, interval{lo, full.hi})
	} else {
		set = clamp(interval{lo, hi})
	}
	if len(set) == 0 {
		return nil, fmt.Errorf("the bounds admit no value")
	}
	return set, nil
}

// integerSchema is an integer kind's schema: a number with its range, or —
// for 64-bit kinds and for map keys — a string whose pattern carries the
// range and the bounds.
func integerSchema(kind protoreflect.Kind, typed protoreflect.Message, asString bool) (base, rule *jsonschema.Schema, zero any, err error) {
	full := integerRange(kind)
	r := readNumericRules(typed)
	set, err := integerBounds(r, full)
	if err != nil {
		return nil, nil, nil, err
	}
	bounded := len(set) != 1 || set[0].lo.Cmp(full.lo) != 0 || set[0].hi.Cmp(full.hi) != 0
	spell := func(v protoreflect.Value) any {
		if asString {
			return bigOf(v).String()
		}
		return json.Number(bigOf(v).String())
	}
	base, rule = &jsonschema.Schema{}, &jsonschema.Schema{}
	if asString {
		base.Type = "string"
		base.Pattern = integerPattern([]interval{full})
		if bounded {
			rule.Pattern = integerPattern(set)
		}
		zero = "0"
		if is64Bit(kind) {
			base.Format = "int64"
			if full.lo.Sign() == 0 {
				base.Format = "uint64"
			}
		}
	} else {
		base.Type = "integer"
		base.Minimum, base.Maximum = json.Number(full.lo.String()), json.Number(full.hi.String())
		zero = json.Number("0")
		switch {
		case len(set) == 2:
			rule.AnyOf = []*jsonschema.Schema{
				{Maximum: json.Number(set[0].hi.String())},
				{Minimum: json.Number(set[1].lo.String())},
			}
		case bounded:
			rule.Minimum, rule.Maximum = json.Number(set[0].lo.String()), json.Number(set[0].hi.String())
		}
	}
	if r.constant != nil {
		rule.Const = spell(*r.constant)
	}
	for _, v := range r.in {
		rule.Enum = append(rule.Enum, spell(v))
	}
	if len(r.notIn) > 0 {
		not := &jsonschema.Schema{}
		for _, v := range r.notIn {
			not.Enum = append(not.Enum, spell(v))
		}
		rule.Not = not
	}
	for _, v := range r.examples {
		base.Examples = append(base.Examples, spell(v))
	}
	return base, rule, zero, nil
}

// Largest finite values, spelled as protojson spells them (the shortest
// decimal that reads back as the value), so the type's canonical spellings
// all pass.
const (
	maxFloat32 = "3.4028235e38"
	maxFloat64 = "1.7976931348623157e308"
)

func floatSchema(kind protoreflect.Kind, typed protoreflect.Message) (base, rule *jsonschema.Schema, err error) {
	bits, max := 64, maxFloat64
	if kind == protoreflect.FloatKind {
		bits, max = 32, maxFloat32
	}
	spell := func(v protoreflect.Value) (json.Number, error) {
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return "", fmt.Errorf("%v has no JSON spelling", f)
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, bits)), nil
	}
	base = &jsonschema.Schema{Type: "number", Minimum: json.Number("-" + max), Maximum: json.Number(max)}
	rule = &jsonschema.Schema{}
	r := readNumericRules(typed)
	// An infinite bound on its own side admits every finite number.
	if r.lower != nil && math.IsInf(r.lower.value.Float(), -1) {
		r.lower = nil
	}
	if r.upper != nil && math.IsInf(r.upper.value.Float(), 1) {
		r.upper = nil
	}
	var lower, upper *jsonschema.Schema
	if r.lower != nil {
		n, err := spell(r.lower.value)
		if err != nil {
			return nil, nil, fmt.Errorf("lower bound: %w", err)
		}
		lower = &jsonschema.Schema{ExclusiveMinimum: n}
		if r.lower.inclusive {
			lower = &jsonschema.Schema{Minimum: n}
		}
	}
	if r.upper != nil {
		n, err := spell(r.upper.value)
		if err != nil {
			return nil, nil, fmt.Errorf("upper bound: %w", err)
		}
		upper = &jsonschema.Schema{ExclusiveMaximum: n}
		if r.upper.inclusive {
			upper = &jsonschema.Schema{Maximum: n}
		}
	}
	switch {
	case lower != nil && upper != nil && r.upper.value.Float() < r.lower.value.Float():
		rule.AnyOf = []*jsonschema.Schema{upper, lower}
	default:
		// A finite bound on one side replaces the type's limit on that side.
		if lower != nil {
			base.Minimum = ""
			absorb(rule, lower)
		}
		if upper != nil {
			base.Maximum = ""
			absorb(rule, upper)
		}
	}
	if r.constant != nil {
		n, err := spell(*r.constant)
		if err != nil {
			return nil, nil, fmt.Errorf("const: %w", err)
		}
		rule.Const = n
	}
	for _, v := range r.in {
		n, err := spell(v)
		if err != nil {
			return nil, nil, fmt.Errorf("in: %w", err)
		}
		rule.Enum = append(rule.Enum, n)
	}
	if len(r.notIn) > 0 {
		not := &jsonschema.Schema{}
		for _, v := range r.notIn {
			if n, err := spell(v); err == nil {
				not.Enum = append(not.Enum, n)
			}
		}
		if len(not.Enum) > 0 {
			rule.Not = not
		}
	}
	for _, v := range r.examples {
		if n, err := spell(v); err == nil {
			base.Examples = append(base.Examples, n)
		}
	}
	return base, rule, nil
}
