package catalogue_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"buf.build/go/protovalidate"
	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/catalogue/cataloguetest"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// restarted is data loaded and mounted as garmd's next start would with
// the check cache first's mount recorded: its files built from their
// bytes, its inputs' validators compiled on first use.
func restarted(t *testing.T, data []byte, first *catalogue.Generation, validated []artifact.FileKey) *catalogue.Generation {
	t.Helper()
	g, err := catalogue.Load(data, catalogue.Options{Checked: artifact.NewChecked(first.FileKeys()), Validated: artifact.NewChecked(validated)})
	if err != nil {
		t.Fatal(err)
	}
	if err := catalogue.Mount(g, everyStep); err != nil {
		t.Fatal(err)
	}
	return g
}

func mounted(t *testing.T, data []byte) *catalogue.Generation {
	t.Helper()
	g, err := catalogue.Load(data, catalogue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := catalogue.Mount(g, everyStep); err != nil {
		t.Fatal(err)
	}
	return g
}

// everyStep mounts the bank, which needs grants, notification, audit and
// limits.
var everyStep = catalogue.Steps{Grants: true, Notify: true, AuditRetention: retention(0), Limits: true, ToolTimeout: 30 * time.Second}

// probes are messages of md that break what rules its fields may have:
// empty, and every scalar field set to an extreme (a long string, a
// negative number, an undeclared enum value), with every singular message
// field set empty.
func probes(md protoreflect.MessageDescriptor) []*dynamicpb.Message {
	extreme := dynamicpb.NewMessage(md)
	fields := md.Fields()
	for i := range fields.Len() {
		f := fields.Get(i)
		if f.IsList() || f.IsMap() || f.ContainingOneof() != nil && i > 0 && f.ContainingOneof() == fields.Get(i-1).ContainingOneof() {
			continue
		}
		var v protoreflect.Value
		switch f.Kind() {
		case protoreflect.StringKind:
			v = protoreflect.ValueOfString(strings.Repeat("x", 300))
		case protoreflect.BytesKind:
			v = protoreflect.ValueOfBytes(make([]byte, 300))
		case protoreflect.BoolKind:
			v = protoreflect.ValueOfBool(true)
		case protoreflect.EnumKind:
			v = protoreflect.ValueOfEnum(99)
		case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
			v = protoreflect.ValueOfInt32(-1)
		case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
			v = protoreflect.ValueOfInt64(-1)
		case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
			v = protoreflect.ValueOfUint32(1 << 31)
		case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
			v = protoreflect.ValueOfUint64(1 << 63)
		case protoreflect.FloatKind:
			v = protoreflect.ValueOfFloat32(-1.5)
		case protoreflect.DoubleKind:
			v = protoreflect.ValueOfFloat64(-1.5)
		case protoreflect.MessageKind, protoreflect.GroupKind:
			v = protoreflect.ValueOfMessage(dynamicpb.NewMessage(f.Message()))
		default:
			continue
		}
		extreme.Set(f, v)
	}
	return []*dynamicpb.Message{dynamicpb.NewMessage(md), extreme}
}

// verdicts are what v answers every probe of every input of g's tools.
func verdicts(g *catalogue.Generation) map[string]string {
	out := map[string]string{}
	for _, tool := range g.Tools {
		for i, m := range probes(tool.Input) {
			out[fmt.Sprintf("%s/%d", tool.FQN, i)] = fmt.Sprint(g.Validator().Validate(m))
		}
	}
	return out
}

func TestAMountTheCheckCacheVouchedForValidatesAsACompiledOne(t *testing.T) {
	for _, roots := range [][]string{{"../../../examples/bank/proto"}, {"../../testdata/records/proto", "../../../examples/calculator/proto"}} {
		t.Run(roots[0], func(t *testing.T) {
			data := cataloguetest.Build(t, roots...)
			first := mounted(t, data)
			want := verdicts(first)
			g := restarted(t, data, first, first.ValidatedKeys())
			if n, of := catalogue.LazyShards(g); n == 0 || n != of {
				t.Fatalf("%d of %d shards compile on first use", n, of)
			}
			violations := 0
			for probe, verdict := range verdicts(g) {
				if verdict != want[probe] {
					t.Errorf("%s: %s, compiled at mount %s", probe, verdict, want[probe])
				}
				if strings.Contains(verdict, "validation error") {
					violations++
				}
			}
			if violations == 0 {
				t.Fatal("no probe broke a rule: the comparison shows nothing")
			}
			// A message no tool takes is refused, as by a validator
			// compiled at mount.
			other := dynamicpb.NewMessage(g.Tools[0].Output)
			var compile *protovalidate.CompilationError
			if errs := [2]error{first.Validator().Validate(other), g.Validator().Validate(other)}; !errors.As(errs[1], &compile) || fmt.Sprint(errs[0]) != fmt.Sprint(errs[1]) {
				t.Fatalf("a message no tool takes: %v, compiled at mount %v", errs[1], errs[0])
			}
		})
	}
}

func TestOnlyAShardWhoseEveryInputWasVouchedForCompilesOnFirstUse(t *testing.T) {
	data := cataloguetest.Build(t, "../../testdata/records/proto", "../../../examples/calculator/proto")
	first := mounted(t, data)
	keys := first.ValidatedKeys()
	if len(keys) < 2 {
		t.Fatalf("%d files declare inputs", len(keys))
	}
	g := restarted(t, data, first, keys[1:])
	if n, of := catalogue.LazyShards(g); n == of {
		t.Fatalf("%d of %d shards compile on first use, with a file's inputs not vouched for", n, of)
	}
	if g := restarted(t, data, first, nil); func() bool { n, _ := catalogue.LazyShards(g); return n != 0 }() {
		t.Fatal("a shard compiles on first use with nothing vouched for")
	}
}

// The cache vouches; the mount believes it. A record saying a file's rules
// compiled when they do not — which only a record forged under this
// deployment's key could say — leaves the call failing closed on its first
// validation, never passing it.
func TestAVouchedInputWhoseRulesDoNotCompileFailsItsValidation(t *testing.T) {
	data := cataloguetest.Build(t, "testdata/badrules")
	g, err := catalogue.Load(data, catalogue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var keys []artifact.FileKey
	for _, tool := range g.Tools {
		keys = append(keys, catalogue.FileKeyOf(g, tool.Input))
	}
	g, err = catalogue.Load(data, catalogue.Options{Validated: artifact.NewChecked(keys)})
	if err != nil {
		t.Fatal(err)
	}
	if err := catalogue.Mount(g, everyStep); err != nil {
		t.Fatal(err)
	}
	var compile *protovalidate.CompilationError
	for _, tool := range g.Tools {
		if err := g.Validator().Validate(dynamicpb.NewMessage(tool.Input)); !errors.As(err, &compile) {
			t.Fatalf("%s: %v", tool.FQN, err)
		}
	}
}

func TestInputsVouchedForCompileOnceWhenValidatedAtOnce(t *testing.T) {
	data := cataloguetest.Build(t, "../../../examples/bank/proto")
	first := mounted(t, data)
	want := verdicts(first)
	g := restarted(t, data, first, first.ValidatedKeys())
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for probe, verdict := range verdicts(g) {
				if verdict != want[probe] {
					t.Errorf("%s: %s, want %s", probe, verdict, want[probe])
				}
			}
		})
	}
	wg.Wait()
}
