package garmd_test

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestNoSpanCarriesARequestValueATokenAGrantOrACompartment makes calls
// that carry fresh random values — in their bodies, in the tools' answers,
// as their bearer tokens — over both surfaces and down every path (served,
// refused at each gate, refused by the tool), and asserts that none of
// them, nor any token, grant, subject, clearance or compartment name,
// appears anywhere in any span either process exported.
func TestNoSpanCarriesARequestValueATokenAGrantOrACompartment(t *testing.T) {
	t.Parallel()
	tr := newTraces(t)
	s := startGovernedStack(t, withTracing(tr), withMCPOn())
	secrets := []string{
		"pii-contact", "pii-identity", "confidential", "restricted",
		recordName, recordEmail, recordNationalID, recordCity, recordStreet,
		"user:sam@acme.example", "user:ana@acme.example", "user:olly@contractor.example", "user:pat@acme.example",
		"user:paula@acme.example", "agent:support-assistant", "GB29NWBK60161331926819",
	}
	token := func(persona string) string {
		tok := s.token(persona)
		secrets = append(secrets, tok, tok[strings.LastIndexByte(tok, '.')+1:])
		return tok
	}
	for range 8 {
		v := randomValue(t)
		secrets = append(secrets, v)
		grant := s.grant("approver", "appr.v1.pay", payer, paymentMaterial, v)
		secrets = append(secrets, grant, grant[strings.LastIndexByte(grant, '.')+1:])
		calls := []*answer{
			s.post(echoPath, token("assistant>analyst"), `{"text": "`+v+`"}`),
			s.post(renamePath, token("support"), `{"id": "`+v+`", "name": "`+v+`"}`),
			s.post(getPath, token("analyst"), `{"id": "`+v+`"}`),
			s.post(getPath, token("outsider"), `{"id": "`+v+`"}`),
			s.post("/fix.v1.Records/"+v, token("outsider"), `{"id": "`+v+`"}`),
			s.post(refusePath, token("public"), `{"code": "409", "message": "`+v+`"}`),
			s.post(refusePath, token("public"), `{"code": "500", "message": "`+v+`"}`),
			s.post(addPath, token("public"), `{"a": 1, "`+v+`": 2}`),
			s.post(addPath, v, `{"a": 1, "b": 2}`),
			s.post(payPath, token("payer"), strings.Replace(payment, "invoice 7", v, 1)),
			s.post(payPath, token("payer"), payment, "Garm-Grant", grant, "Garm-Correlation-Id", v),
			s.post(payPath, token("payer"), payment, "Garm-Grant", v+"."+v+"."+v),
			s.mcpTracedCall(token("assistant>analyst"), "fix.v1.echo", `{"text": "`+v+`"}`, newCallerTrace(1).header()),
			s.mcpTracedCall(token("outsider"), "fix.v1.get_record", `{"id": "`+v+`"}`, newCallerTrace(2).header()),
			s.mcpTracedCall(token("outsider"), v, `{"id": "`+v+`"}`, newCallerTrace(3).header()),
			s.mcpTracedCall(v, "calc.v1.add", `{"a": 1}`, newCallerTrace(4).header()),
		}
		for i, ans := range calls {
			if ans.status == 0 {
				t.Fatalf("call %d: no answer", i)
			}
		}
	}
	spans := tr.exporter.GetSpans()
	if len(spans) < 8*16 {
		t.Fatalf("%d spans exported: the calls were not traced", len(spans))
	}
	for _, sp := range spans {
		text := spanText(sp)
		for _, secret := range secrets {
			if strings.Contains(text, secret) {
				t.Errorf("span %q carries %q:\n%s", sp.Name, secret, text)
			}
		}
	}
}

func randomValue(t *testing.T) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "LEAK" + hex.EncodeToString(b)
}

// spanText is everything a span says, as exported: its name, status,
// attributes, events, links and resource.
func spanText(s tracetest.SpanStub) string {
	var b strings.Builder
	kv := func(attrs []attribute.KeyValue) {
		for _, a := range attrs {
			fmt.Fprintf(&b, " %s=%s", a.Key, a.Value.Emit())
		}
	}
	fmt.Fprintf(&b, "%s %s %s %s", s.Name, s.Status.Code, s.Status.Description, s.SpanContext.TraceState().String())
	kv(s.Attributes)
	for _, e := range s.Events {
		b.WriteString(" event " + e.Name)
		kv(e.Attributes)
	}
	for _, l := range s.Links {
		kv(l.Attributes)
	}
	if s.Resource != nil {
		kv(s.Resource.Attributes())
	}
	return b.String()
}
