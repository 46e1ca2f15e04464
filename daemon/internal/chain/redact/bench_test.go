package redact_test

import (
	"testing"

	"github.com/garm-dev/garm/daemon/internal/chain/redact"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// BenchmarkResolveCached is the per-call cost of finding a shape's
// resolution once it is cached.
func BenchmarkResolveCached(b *testing.B) {
	account := tool(b, "get_account")
	r := redact.New(64, hashKey)
	shape := shapeOf(b, internal)
	r.Resolve(account.OutputPlan, account.OutputRuleCompartments, shape)
	b.ReportAllocs()
	for b.Loop() {
		r.Resolve(account.OutputPlan, account.OutputRuleCompartments, shape)
	}
}

// BenchmarkResolveUncached is what a shape's first call (or every call,
// with a cache of size zero) pays to resolve get_statement's fifty rules,
// arms read included.
func BenchmarkResolveUncached(b *testing.B) {
	statement := tool(b, "get_statement")
	r := redact.New(0, hashKey)
	shape := shapeOf(b, internal)
	b.ReportAllocs()
	for b.Loop() {
		r.Resolve(statement.OutputPlan, statement.OutputRuleCompartments, shape)
	}
}

// BenchmarkApplySmall redacts a three-field answer with one denied leaf for
// a cached shape. Each iteration sets the denied field again, which Apply
// then clears; that reset is counted too, and its dynamicpb Set is the one
// allocation reported (Apply itself allocates nothing).
func BenchmarkApplySmall(b *testing.B) {
	balance := tool(b, "get_balance")
	r := redact.New(64, hashKey)
	shape := shapeOf(b, internal)
	m := answer(b, balance, `{"accountId": "acct-1", "iban": "DE89370400440532013000", "minorUnits": "125000"}`)
	iban := balance.Output.Fields().ByName("iban")
	value := protoreflect.ValueOfString("DE89370400440532013000")
	if got, err := r.Apply(balance, shape, tenant, m); err != nil || got.Count != 1 {
		b.Fatalf("apply: %+v, %v", got, err)
	}
	b.ReportAllocs()
	for b.Loop() {
		m.Set(iban, value)
		if _, err := r.Apply(balance, shape, tenant, m); err != nil {
			b.Fatal(err)
		}
	}
}

// statementReset puts back the values Apply transformed in a fullStatement
// answer, so that each iteration transforms the original values again.
type statementReset struct {
	strings    []protoreflect.FieldDescriptor
	values     []protoreflect.Value
	timestamps []protoreflect.FieldDescriptor
}

func newStatementReset(m protoreflect.Message) *statementReset {
	s := &statementReset{}
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		switch fd := fields.Get(i); {
		case fd.Number()%2 == 1:
		case fd.Kind() == protoreflect.StringKind:
			s.strings = append(s.strings, fd)
			s.values = append(s.values, protoreflect.ValueOfString(statementString(fd)))
		default:
			s.timestamps = append(s.timestamps, fd)
		}
	}
	return s
}

func (s *statementReset) reset(m protoreflect.Message) {
	for i, fd := range s.strings {
		m.Set(fd, s.values[i])
	}
	for _, fd := range s.timestamps {
		ts := m.Mutable(fd).Message()
		fields := ts.Descriptor().Fields()
		ts.Set(fields.ByNumber(1), protoreflect.ValueOfInt64(statementSeconds+int64(fd.Number())))
		ts.Set(fields.ByNumber(2), protoreflect.ValueOfInt32(int32(fd.Number())))
	}
}

// BenchmarkApplyStatement redacts get_statement's fifty-field answer for a
// cached shape denied its twenty-five even fields, under every arm in turn
// (hash both plain and per tenant). Each iteration first puts the original
// values back; BenchmarkResetStatement is that reset alone, to subtract.
func BenchmarkApplyStatement(b *testing.B) {
	statement := tool(b, "get_statement")
	r := redact.New(64, hashKey)
	shape := shapeOf(b, internal)
	m := fullStatement(b, statement)
	s := newStatementReset(m)
	if got, err := r.Apply(statement, shape, tenant, m); err != nil || got.Count != 25 {
		b.Fatalf("apply: %+v, %v", got, err)
	}
	b.ReportAllocs()
	for b.Loop() {
		s.reset(m)
		if _, err := r.Apply(statement, shape, tenant, m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkResetStatement is BenchmarkApplyStatement's reset alone.
func BenchmarkResetStatement(b *testing.B) {
	statement := tool(b, "get_statement")
	m := fullStatement(b, statement)
	s := newStatementReset(m)
	b.ReportAllocs()
	for b.Loop() {
		s.reset(m)
	}
}
