package redact_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/chain/redact"
	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

func marshal(t *testing.T, m protoreflect.Message) []byte {
	t.Helper()
	b, err := proto.Marshal(m.Interface())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestNoWithheldValueSurvivesInTheMarshalledAnswer(t *testing.T) {
	account := tool(t, "get_account")
	for _, tc := range shapeCases {
		t.Run(tc.name, func(t *testing.T) {
			m := answer(t, account, fullAccount)
			got, err := redact.New(16, hashKey).Apply(account, shapeOf(t, tc.clearance, tc.compartments...), tenant, m)
			if err != nil {
				t.Fatal(err)
			}
			out := marshal(t, m)
			for path, values := range secrets {
				withheld := slices.Contains(tc.withheld, path)
				for _, v := range values {
					switch found := bytes.Contains(out, v); {
					case withheld && found:
						t.Errorf("%s's value %q survived redaction", path, v)
					case !withheld && !found:
						t.Errorf("%s's value %q was withheld from a caller who may read it", path, v)
					}
				}
			}
			// fullAccount sets every denied field but last_login_ip, which
			// shares a oneof with last_phone; it carries every audited one.
			want := uint32(len(tc.denied))
			if slices.Contains(tc.denied, "last_login_ip") {
				want--
			}
			if got.Count != want || got.Disclosed != uint32(len(tc.audited)) {
				t.Errorf("count %d and disclosed %d, want %d and %d", got.Count, got.Disclosed, want, len(tc.audited))
			}
		})
	}
}

func TestEveryElementOfAListAndEveryValueOfAMapIsWithheld(t *testing.T) {
	account := tool(t, "get_account")
	m := answer(t, account, `{
	  "contacts": [{"name": "A", "email": "a@mail.example"}, {"email": "b@mail.example"}, {"name": "C", "email": "c@mail.example"}],
	  "holdings": {"x": {"amount": "1", "reference": "rx"}, "y": {"amount": "2"}, "z": {"reference": "rz"}}
	}`)
	got, err := redact.New(16, hashKey).Apply(account, shapeOf(t, confidential), tenant, m)
	if err != nil {
		t.Fatal(err)
	}
	if got.Count != 2 {
		t.Errorf("count %d: contacts.email and holdings.amount changed, each counts once", got.Count)
	}
	// contacts.email takes email_domain, holdings.amount (an int64) omit.
	want := answer(t, account, `{
	  "contacts": [{"name": "A", "email": "***@mail.example"}, {"email": "***@mail.example"}, {"name": "C", "email": "***@mail.example"}],
	  "holdings": {"x": {"reference": "rx"}, "y": {}, "z": {"reference": "rz"}}
	}`)
	if !proto.Equal(m.Interface(), want.Interface()) {
		t.Errorf("redacted to %v, want %v", m, want)
	}
}

func TestAnAnswerWithoutDeniedFieldsCountsNothingAndKeepsThePlan(t *testing.T) {
	account := tool(t, "get_account")
	r := redact.New(16, hashKey)
	low := shapeOf(t, internal)
	m := answer(t, account, `{"accountId": "a", "contacts": [{"name": "n"}], "holdings": {"k": {}}}`)
	before := proto.Clone(m.Interface())
	got, err := r.Apply(account, low, tenant, m)
	if err != nil {
		t.Fatal(err)
	}
	if got.Count != 0 || got.Disclosed != 0 {
		t.Errorf("count %d, disclosed %d for an answer with nothing denied or audited", got.Count, got.Disclosed)
	}
	if want := r.Resolve(account.OutputPlan, account.OutputRuleCompartments, low).Plan; got.Plan != want || want == "" {
		t.Errorf("plan %q, want the shape's %q", got.Plan, want)
	}
	if !proto.Equal(before, m.Interface()) {
		t.Errorf("an answer with nothing denied changed: %v", m)
	}
}

func TestAnEmptyDeniedMessageIsWithheldAndCounted(t *testing.T) {
	account := tool(t, "get_account")
	m := answer(t, account, `{"billing": {}}`)
	got, err := redact.New(16, hashKey).Apply(account, shapeOf(t, internal), tenant, m)
	if err != nil {
		t.Fatal(err)
	}
	if got.Count != 1 || m.Has(account.Output.Fields().ByName("billing")) {
		t.Fatalf("count %d, billing still present %v: its presence alone says something", got.Count, m)
	}
}

func TestAWithheldOneofMemberIsCleared(t *testing.T) {
	account := tool(t, "get_account")
	m := answer(t, account, `{"lastLoginIp": "IP-203.0.113.77"}`)
	got, err := redact.New(16, hashKey).Apply(account, shapeOf(t, internal), tenant, m)
	if err != nil {
		t.Fatal(err)
	}
	if got.Count != 1 || bytes.Contains(marshal(t, m), []byte("IP-203.0.113.77")) {
		t.Fatalf("count %d and the address survived: %v", got.Count, m)
	}
}

func TestDisclosedCountsTheAuditedFieldsTheCallerReceives(t *testing.T) {
	account := tool(t, "get_account")
	cases := []struct {
		name   string
		shape  call.Shape
		answer string
		want   uint32
	}{
		{"nothing audited in the answer", shapeOf(t, restricted, "financial", "pii"), `{"accountId": "a"}`, 0},
		{"one instance of one field in the second element", shapeOf(t, restricted, "financial", "pii"),
			`{"contacts": [{"name": "a"}, {"taxNumber": "t"}]}`, 1},
		{"two instances of one field count once", shapeOf(t, restricted, "financial", "pii"),
			`{"contacts": [{"taxNumber": "t1"}, {"taxNumber": "t2"}]}`, 1},
		{"a field below a withheld message was not received", shapeOf(t, restricted),
			`{"billing": {"holder": "h"}, "nickname": "n"}`, 1},
		{"a withheld field is not disclosed", shapeOf(t, confidential, "financial", "pii"),
			`{"nationalId": "x", "billing": {"holder": "h"}}`, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := redact.New(16, hashKey).Apply(account, tc.shape, tenant, answer(t, account, tc.answer))
			if err != nil {
				t.Fatal(err)
			}
			if got.Disclosed != tc.want {
				t.Fatalf("disclosed %d, want %d", got.Disclosed, tc.want)
			}
		})
	}
}

// withUnknown is fullAccount's encoding with fields no descriptor knows:
// at the top, inside a list element and inside a map value, and a readable
// field's number sent with the wrong wire type.
func withUnknown(t *testing.T, account *call.Tool) []byte {
	t.Helper()
	b := marshal(t, answer(t, account, fullAccount))
	b = protowire.AppendTag(b, 99, protowire.BytesType)
	b = protowire.AppendString(b, "UNKNOWN-TOP-9901")
	contact := protowire.AppendTag(nil, 99, protowire.BytesType)
	contact = protowire.AppendString(contact, "UNKNOWN-CONTACT-9902")
	b = protowire.AppendTag(b, 4, protowire.BytesType)
	b = protowire.AppendBytes(b, contact)
	holding := protowire.AppendTag(nil, 99, protowire.BytesType)
	holding = protowire.AppendString(holding, "UNKNOWN-HOLDING-9903")
	entry := protowire.AppendTag(nil, 1, protowire.BytesType)
	entry = protowire.AppendString(entry, "k")
	entry = protowire.AppendTag(entry, 2, protowire.BytesType)
	entry = protowire.AppendBytes(entry, holding)
	b = protowire.AppendTag(b, 5, protowire.BytesType)
	b = protowire.AppendBytes(b, entry)
	b = protowire.AppendTag(b, 1, protowire.Fixed64Type) // account_id is a string
	return protowire.AppendFixed64(b, 0x5EC2E7C0FFEE5EC2)
}

func TestUnknownFieldsAreDroppedEverywhere(t *testing.T) {
	account := tool(t, "get_account")
	in := withUnknown(t, account)
	m := dynamicpb.NewMessage(account.Output)
	if err := (proto.UnmarshalOptions{DiscardUnknown: false}).Unmarshal(in, m); err != nil {
		t.Fatal(err)
	}
	unknowns := []string{"UNKNOWN-TOP-9901", "UNKNOWN-CONTACT-9902", "UNKNOWN-HOLDING-9903", "\xc2\x5e\xee\xff\xc0\xe7\xc2\x5e"}
	for _, unknown := range unknowns {
		if !bytes.Contains(marshal(t, m), []byte(unknown)) {
			t.Fatalf("the answer as decoded does not keep the unknown %q", unknown)
		}
	}
	if _, err := redact.New(16, hashKey).Apply(account, shapeOf(t, restricted, "financial", "pii"), tenant, m); err != nil {
		t.Fatal(err)
	}
	out := marshal(t, m)
	for _, unknown := range unknowns {
		if bytes.Contains(out, []byte(unknown)) {
			t.Errorf("the unknown field holding %q survived", unknown)
		}
	}
	if !bytes.Contains(out, []byte("NATID-0042-9999")) {
		t.Error("a field the caller may read went with the unknown ones")
	}
}

func TestAPathThatDoesNotResolveFailsTheCall(t *testing.T) {
	account := tool(t, "get_account")
	cases := []struct {
		name, path string
		numbers    []int32
	}{
		{"a top-level number the message lacks", "national_id", []int32{60}},
		{"a nested number the element lacks", "contacts.email", []int32{4, 20}},
		{"a path going on through a string", "contacts.email", []int32{1, 2}},
		{"a path going on through a list of strings", "contacts.email", []int32{7, 1}},
		{"a path with no numbers", "national_id", nil},
	}
	for _, tc := range cases {
		for name, body := range map[string]string{"empty answer": `{}`, "full answer": fullAccount} {
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				broken := withRuleNumbers(t, account, tc.path, tc.numbers)
				_, err := redact.New(16, hashKey).Apply(broken, shapeOf(t, internal), tenant, answer(t, broken, body))
				if err == nil {
					t.Fatalf("rule %s at %v applied without error", tc.path, tc.numbers)
				}
				if !strings.Contains(err.Error(), tc.path) {
					t.Errorf("the error %q does not name the rule", err)
				}
				for _, values := range secrets {
					for _, v := range values {
						if strings.Contains(err.Error(), string(v)) {
							t.Errorf("the error %q carries a value", err)
						}
					}
				}
			})
		}
	}
}

// withRuleNumbers is t with a copy of its output plan in which the rule at
// path has other numbers.
func withRuleNumbers(tb testing.TB, t *call.Tool, path string, numbers []int32) *call.Tool {
	tb.Helper()
	plan := proto.Clone(t.OutputPlan).(*planv1.MessagePlan)
	i := slices.IndexFunc(plan.GetRules(), func(r *planv1.FieldRule) bool { return r.GetPath() == path })
	if i < 0 {
		tb.Fatalf("no rule %q", path)
	}
	plan.GetRules()[i].Numbers = numbers
	broken := *t
	broken.OutputPlan = plan
	return &broken
}

func TestAnAnswerThePlanDoesNotDescribeFails(t *testing.T) {
	account, balance := tool(t, "get_account"), tool(t, "get_balance")
	r := redact.New(16, hashKey)
	if _, err := r.Apply(account, shapeOf(t, internal), tenant, answer(t, balance, `{}`)); err == nil {
		t.Error("a Balance was redacted with Account's plan")
	}
	planless := *account
	planless.OutputPlan = nil
	if _, err := r.Apply(&planless, shapeOf(t, internal), tenant, answer(t, account, `{}`)); err == nil {
		t.Error("a tool without an output plan was redacted")
	}
	if _, err := r.Apply(account, shapeOf(t, internal), tenant, nil); err == nil {
		t.Error("a nil answer was redacted")
	}
}
