package redact_test

import (
	"testing"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/chain/redact"
	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// fuzzTarget is one answer FuzzApply redacts and the caller it redacts for.
type fuzzTarget struct {
	name  string
	tool  *call.Tool
	shape call.Shape
}

// fuzzTenants are the tenant claims FuzzApply's callers carry; "" has none,
// so every per-tenant hash omits.
var fuzzTenants = []string{"acme", "", "globex"}

func fuzzTargets(tb testing.TB) []fuzzTarget {
	account, profile, statement := tool(tb, "get_account"), tool(tb, "get_profile"), tool(tb, "get_statement")
	var targets []fuzzTarget
	for _, tc := range shapeCases {
		targets = append(targets, fuzzTarget{"account/" + tc.name, account, shapeOf(tb, tc.clearance, tc.compartments...)})
	}
	for _, t := range []*call.Tool{profile, statement} {
		for _, c := range []toolv1.Clearance{internal, confidential, unspecified} {
			targets = append(targets, fuzzTarget{t.Name + "/" + c.String(), t, shapeOf(tb, c)})
		}
	}
	return targets
}

// FuzzApply decodes arbitrary bytes as the answer of one of fuzzTargets'
// tools, unknown fields kept, and redacts it for that target's caller and
// one of fuzzTenants, both chosen by selector. Whatever the bytes, Apply
// must not panic or fail; the answer it leaves — in memory and once more
// after a round trip through the wire — must hold no unknown field, every
// field no rule denies exactly as it was, and every instance of every denied
// field absent or exactly its arm's result for the original value; and
// redaction_count must be the number of denied rules for which that differs
// from the original somewhere.
func FuzzApply(f *testing.F) {
	targets := fuzzTargets(f)
	selector := func(name string, tenant int) uint8 {
		for i, t := range targets {
			if t.name == name {
				return uint8(i + tenant*len(targets))
			}
		}
		f.Fatalf("no fuzz target %q", name)
		return 0
	}
	account, profile, statement := tool(f, "get_account"), tool(f, "get_profile"), tool(f, "get_statement")
	f.Add(marshalSeed(f, answer(f, account, fullAccount)), uint8(0))
	f.Add(marshalSeed(f, answer(f, account, `{"billing": {}, "lastLoginIp": "1.2.3.4"}`)), uint8(0))
	f.Add([]byte{}, uint8(1))
	for tenant := range fuzzTenants {
		f.Add(marshalSeed(f, answer(f, profile, fullProfile)), selector("get_profile/CLEARANCE_INTERNAL", tenant))
		f.Add(marshalSeed(f, answer(f, profile, failingProfile)), selector("get_profile/CLEARANCE_INTERNAL", tenant))
		f.Add(marshalSeed(f, fullStatement(f, statement)), selector("get_statement/CLEARANCE_INTERNAL", tenant))
	}
	f.Add(marshalSeed(f, answer(f, profile, fullProfile)), selector("get_profile/CLEARANCE_UNSPECIFIED", 0))
	r := redact.New(4, hashKey)
	f.Fuzz(func(t *testing.T, data []byte, selector uint8) {
		target := targets[int(selector)%len(targets)]
		tenant := fuzzTenants[int(selector)/len(targets)%len(fuzzTenants)]
		m, ok := decode(target.tool.Output, data, false)
		if !ok {
			return
		}
		// The original as Apply must see it, less the unknown fields Apply
		// drops whatever the rules say.
		original, _ := decode(target.tool.Output, data, true)
		got, err := r.Apply(target.tool, target.shape, tenant, m)
		if err != nil {
			t.Fatalf("%s: %v", target.name, err)
		}
		denied := r.Resolve(target.tool.OutputPlan, target.tool.OutputRuleCompartments, target.shape).Denied
		c := &redactionCheck{t: t, denied: denied, tenant: tenant, changed: map[string]bool{}}
		c.compare(original, m, "")
		if got.Count != uint32(len(c.changed)) {
			t.Fatalf("%s: count %d, but %d denied rules changed something: %v", target.name, got.Count, len(c.changed), c.changed)
		}
		out, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		back, ok := decode(target.tool.Output, out, false)
		if !ok {
			t.Fatal("the redacted answer does not decode")
		}
		c.compare(original, back, "")
	})
}

// decode is data as an answer of md, unknown fields kept unless discard, or
// false when it is not one. protobuf-go v1.36.12 panics decoding a map entry
// whose key comes twice, the second time with the wrong wire type, into a
// dynamicpb message (testdata/fuzz/FuzzApply/0747e30d1e1c35d1); such bytes
// never become an answer, so they are not Apply's to survive.
func decode(md protoreflect.MessageDescriptor, data []byte, discard bool) (m *dynamicpb.Message, ok bool) {
	defer func() {
		if recover() != nil {
			m, ok = nil, false
		}
	}()
	m = dynamicpb.NewMessage(md)
	if err := (proto.UnmarshalOptions{DiscardUnknown: discard}).Unmarshal(data, m); err != nil {
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

// redactionCheck compares an answer before and after Apply. It walks every
// field by name, independently of how Apply walks by number, and builds what
// each denied field should hold from the original value with
// redact.TransformString and redact.TransformTimestamp, whose own results
// the transform table pins.
type redactionCheck struct {
	t       *testing.T
	denied  []*planv1.FieldRule
	tenant  string
	changed map[string]bool // the denied rules' paths where after differs from before
}

// compare fails unless after, at path prefix, is before redacted: no unknown
// field, each denied field as expected, and everything else as it was.
func (c *redactionCheck) compare(before, after protoreflect.Message, prefix string) {
	c.t.Helper()
	if len(after.GetUnknown()) > 0 {
		c.t.Fatalf("%q keeps unknown fields", prefix)
	}
	fields := before.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		path := prefix + string(fd.Name())
		if rule := c.rule(path); rule != nil {
			want, present := expected(before, fd, rule.GetOnDeny(), c.tenant)
			switch {
			case present != after.Has(fd):
				c.t.Fatalf("%s: present %v, want %v (on_deny %v)", path, after.Has(fd), present, rule.GetOnDeny())
			case present && !want.Equal(after.Get(fd)):
				c.t.Fatalf("%s (on_deny %v): %v, want %v", path, rule.GetOnDeny(), after.Get(fd), want)
			}
			if before.Has(fd) && (!present || !want.Equal(before.Get(fd))) {
				c.changed[path] = true
			}
			continue
		}
		if before.Has(fd) != after.Has(fd) {
			c.t.Fatalf("%s is denied by no rule, yet present %v became %v", path, before.Has(fd), after.Has(fd))
		}
		if !before.Has(fd) {
			continue
		}
		b, a := before.Get(fd), after.Get(fd)
		switch {
		case fd.IsMap() && fd.MapValue().Message() != nil:
			if b.Map().Len() != a.Map().Len() {
				c.t.Fatalf("%s lost or gained values", path)
			}
			b.Map().Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
				if !a.Map().Has(k) {
					c.t.Fatalf("%s lost the key %v", path, k)
				}
				c.compare(v.Message(), a.Map().Get(k).Message(), path+".")
				return true
			})
		case fd.IsList() && fd.Message() != nil:
			if b.List().Len() != a.List().Len() {
				c.t.Fatalf("%s lost or gained elements", path)
			}
			for j := range b.List().Len() {
				c.compare(b.List().Get(j).Message(), a.List().Get(j).Message(), path+".")
			}
		case !fd.IsList() && !fd.IsMap() && fd.Message() != nil:
			c.compare(b.Message(), a.Message(), path+".")
		case !b.Equal(a):
			c.t.Fatalf("%s is denied by no rule, yet changed", path)
		}
	}
}

func (c *redactionCheck) rule(path string) *planv1.FieldRule {
	for _, r := range c.denied {
		if r.GetPath() == path {
			return r
		}
	}
	return nil
}

// expected is what field fd of before should hold once onDeny applied, and
// false when it should be absent: each value through its arm, a list or map
// absent when any one value cannot be given.
func expected(before protoreflect.Message, fd protoreflect.FieldDescriptor, onDeny *toolv1.Redaction, tenant string) (protoreflect.Value, bool) {
	if !before.Has(fd) {
		return protoreflect.Value{}, false
	}
	vd := fd
	if fd.IsMap() {
		vd = fd.MapValue()
	}
	holder := dynamicpb.NewMessage(before.Descriptor())
	one := func(v protoreflect.Value) (protoreflect.Value, bool) {
		switch {
		case vd.Kind() == protoreflect.StringKind:
			s, ok := redact.TransformString(onDeny, hashKey, tenant, v.String())
			return protoreflect.ValueOfString(s), ok
		case vd.Message() != nil && vd.Message().FullName() == "google.protobuf.Timestamp":
			ts := v.Message()
			seconds, nanos := ts.Descriptor().Fields().ByName("seconds"), ts.Descriptor().Fields().ByName("nanos")
			out, ok := redact.TransformTimestamp(onDeny, ts.Get(seconds).Int(), int32(ts.Get(nanos).Int()))
			grained := dynamicpb.NewMessage(vd.Message())
			grained.Set(seconds, protoreflect.ValueOfInt64(out))
			return protoreflect.ValueOfMessage(grained), ok
		}
		return protoreflect.Value{}, false
	}
	switch {
	case fd.IsList():
		src, dst := before.Get(fd).List(), holder.Mutable(fd).List()
		for i := range src.Len() {
			v, ok := one(src.Get(i))
			if !ok {
				return protoreflect.Value{}, false
			}
			dst.Append(v)
		}
	case fd.IsMap():
		dst, all := holder.Mutable(fd).Map(), true
		before.Get(fd).Map().Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
			out, ok := one(v)
			if ok {
				dst.Set(k, out)
			}
			all = ok
			return ok
		})
		if !all {
			return protoreflect.Value{}, false
		}
	default:
		v, ok := one(before.Get(fd))
		if !ok {
			return protoreflect.Value{}, false
		}
		holder.Set(fd, v)
	}
	return holder.Get(fd), true
}
