package redact_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/chain/redact"
	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// fullProfile sets every field of Profile to a value its arm transforms.
const fullProfile = `{
  "id": "PROFILE-ID-0000",
  "secret": "SECRET-VALUE-0001",
  "code": "CODE-VALUE-0002",
  "codeWord": "CODEWORD-VALUE-0003",
  "reference": "REFERENCE-VALUE-0004",
  "tenantReference": "TENANT-REFERENCE-0005",
  "email": "ada.lovelace@corp.com",
  "phone": "+442071234567",
  "accountNumber": "DE89370400440532013000",
  "bio": "aaaa日本語テスト",
  "note": "aaaa日本語",
  "card": "4111 1111 1111 1111",
  "ip": "10.1.2.77",
  "ip6": "2001:db8:85a3:1234::8a2e:370:7334",
  "homepage": "https://user:pw@x.com:8443/a/b?token=secret#frag",
  "born": "2024-03-17T13:45:30.500Z",
  "joined": "2024-03-17T13:45:30.500Z",
  "seen": "2024-03-17T13:45:30.500Z",
  "emails": ["a@x.com", "b@y.org"],
  "phones": {"home": "+442071234567", "work": "12"},
  "logins": ["2024-03-17T13:45:30Z", "2024-03-18T01:02:03Z"],
  "milestones": {"opened": "2024-03-17T13:45:30Z"},
  "devices": [
    {"name": "laptop", "ip": "192.168.77.12", "serial": "SN-000123456", "registered": "2023-11-05T08:09:10Z"},
    {"name": "phone", "ip": "172.16.5.4"}
  ],
  "devicesByName": {
    "laptop": {"name": "laptop", "ip": "192.168.77.12", "serial": "SN-000123456", "registered": "2023-11-05T08:09:10Z"},
    "tablet": {"serial": "TB-9"}
  },
  "avatar": "QVZBVEFSLUJZVEVTLTAwMDY=",
  "score": "912837465",
  "emailsByKind": {"work": "ada@corp.com", "home": "ada@home.example"}
}`

// failingProfile sets Profile's fields to values their arms cannot give,
// in one element of each list and one value of each map.
const failingProfile = `{
  "email": "not-an-email",
  "card": "4111",
  "ip": "fe80::1%eth0",
  "ip6": "10.1.2.77",
  "homepage": "mailto:ada@corp.com",
  "emails": ["a@x.com", "bad"],
  "emailsByKind": {"work": "ada@corp.com", "home": "bad"},
  "devices": [{"ip": "192.168.77.12"}, {"ip": "not-an-ip"}]
}`

// hmacHex is the hash arm's result written out from crypto/hmac alone:
// keyed with hashKey, or with HMAC(hashKey, tenant) for a tenant.
func hashOf(tenant, value string) string {
	key := hashKey
	if tenant != "" {
		derive := hmac.New(sha256.New, hashKey)
		derive.Write([]byte(tenant))
		key = derive.Sum(nil)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(value))
	return hex.EncodeToString(mac.Sum(nil)[:16])
}

func applyProfile(t *testing.T, r *redact.Redactor, tenant, json string) (protoreflect.Message, redact.Result) {
	t.Helper()
	profile := tool(t, "get_profile")
	m := answer(t, profile, json)
	got, err := r.Apply(profile, shapeOf(t, internal), tenant, m)
	if err != nil {
		t.Fatal(err)
	}
	return m, got
}

func assertAnswer(t *testing.T, m protoreflect.Message, json string) {
	t.Helper()
	if want := answer(t, tool(t, "get_profile"), json); !proto.Equal(m.Interface(), want.Interface()) {
		t.Errorf("redacted to\n%v\nwant\n%v", m, want)
	}
}

func TestACallerWhoMayNotReadTheProfileGetsEveryArmsResult(t *testing.T) {
	m, got := applyProfile(t, redact.New(16, hashKey), "acme", fullProfile)
	assertAnswer(t, m, fmt.Sprintf(`{
	  "id": "PROFILE-ID-0000",
	  "code": "[REDACTED]",
	  "codeWord": "<hidden>",
	  "reference": %q,
	  "tenantReference": %q,
	  "email": "***@corp.com",
	  "phone": "*********4567",
	  "accountNumber": "******************3000",
	  "bio": "aaaa…",
	  "note": "aaaa日…",
	  "card": "411111******1111",
	  "ip": "10.1.2.0",
	  "ip6": "2001:db8:85a3::",
	  "homepage": "https://x.com:8443",
	  "born": "2024-01-01T00:00:00Z",
	  "joined": "2024-03-01T00:00:00Z",
	  "seen": "2024-03-17T00:00:00Z",
	  "emails": ["***@x.com", "***@y.org"],
	  "phones": {"home": "*********4567", "work": "**"},
	  "logins": ["2024-03-17T00:00:00Z", "2024-03-18T00:00:00Z"],
	  "milestones": {"opened": "2024-03-01T00:00:00Z"},
	  "devices": [
	    {"name": "laptop", "ip": "192.168.0.0", "serial": "********3456", "registered": "2023-11-05T00:00:00Z"},
	    {"name": "phone", "ip": "172.16.0.0"}
	  ],
	  "devicesByName": {
	    "laptop": {"name": "laptop", "ip": "192.168.0.0", "serial": "********3456", "registered": "2023-11-05T00:00:00Z"},
	    "tablet": {"serial": "****"}
	  },
	  "emailsByKind": {"work": "***@corp.com", "home": "***@home.example"}
	}`, hashOf("", "REFERENCE-VALUE-0004"), hashOf("acme", "TENANT-REFERENCE-0005")))
	profile := tool(t, "get_profile")
	denied := redact.New(0, nil).Resolve(profile.OutputPlan, profile.OutputRuleCompartments, shapeOf(t, internal)).Denied
	if got.Count != uint32(len(denied)) || len(denied) != 30 {
		t.Errorf("count %d with %d denied rules: every one of the 30 changed something", got.Count, len(denied))
	}
}

func TestACallerWhoMayReadTheProfileGetsItWhole(t *testing.T) {
	profile := tool(t, "get_profile")
	m := answer(t, profile, fullProfile)
	got, err := redact.New(16, hashKey).Apply(profile, shapeOf(t, confidential), tenant, m)
	if err != nil {
		t.Fatal(err)
	}
	if got.Count != 0 {
		t.Errorf("count %d for a caller denied nothing", got.Count)
	}
	assertAnswer(t, m, fullProfile)
}

func TestNoOriginalOfAMaskedHashedOrOmittedValueSurvivesInTheMarshalledAnswer(t *testing.T) {
	originals := [][]byte{
		[]byte("SECRET-VALUE-0001"), []byte("CODE-VALUE-0002"), []byte("CODEWORD-VALUE-0003"),
		[]byte("REFERENCE-VALUE-0004"), []byte("TENANT-REFERENCE-0005"), []byte("ada.lovelace"),
		[]byte("AVATAR-BYTES-0006"), varintField(26, 912837465), []byte("token=secret"), []byte("user:pw"),
		[]byte("2071234567"), []byte("SN-000123456"), []byte("4111111111111111"), []byte("1111 1111"),
	}
	for _, tenant := range []string{"acme", ""} {
		m, _ := applyProfile(t, redact.New(16, hashKey), tenant, fullProfile)
		out := marshal(t, m)
		for _, v := range originals {
			if bytes.Contains(out, v) {
				t.Errorf("tenant %q: %q survived redaction", tenant, v)
			}
		}
	}
}

func TestAListIsClearedWholeWhenOneElementCannotBeTransformed(t *testing.T) {
	m, got := applyProfile(t, redact.New(16, hashKey), tenant, `{"emails": ["a@x.com", "bad"], "logins": ["2024-03-17T13:45:30Z"]}`)
	assertAnswer(t, m, `{"logins": ["2024-03-17T00:00:00Z"]}`)
	if got.Count != 2 {
		t.Errorf("count %d: the cleared list and the grained one both changed", got.Count)
	}
	// protojson refuses a Timestamp out of range; a tool's answer on the
	// wire does not.
	profile := tool(t, "get_profile")
	m = answer(t, profile, `{"logins": ["2024-03-17T13:45:30Z", "2024-03-18T13:45:30Z"]}`)
	logins := m.Get(profile.Output.Fields().ByName("logins")).List()
	bad := logins.Get(1).Message()
	bad.Set(bad.Descriptor().Fields().ByName("nanos"), protoreflect.ValueOfInt32(-1))
	if _, err := redact.New(16, hashKey).Apply(profile, shapeOf(t, internal), tenant, m); err != nil {
		t.Fatal(err)
	}
	assertAnswer(t, m, `{}`)
}

func TestAMapKeepsItsKeysAndTransformsItsValues(t *testing.T) {
	m, got := applyProfile(t, redact.New(16, hashKey), tenant, `{
	  "phones": {"home": "+442071234567", "work": "12"},
	  "emailsByKind": {"work": "ada@corp.com"},
	  "milestones": {"opened": "2024-03-17T13:45:30Z", "closed": "2025-01-01T00:00:00Z"}
	}`)
	assertAnswer(t, m, `{
	  "phones": {"home": "*********4567", "work": "**"},
	  "emailsByKind": {"work": "***@corp.com"},
	  "milestones": {"opened": "2024-03-01T00:00:00Z", "closed": "2025-01-01T00:00:00Z"}
	}`)
	if got.Count != 3 {
		t.Errorf("count %d: each map changed in at least one value", got.Count)
	}
}

func TestAMapIsClearedWholeWhenOneValueCannotBeTransformed(t *testing.T) {
	m, got := applyProfile(t, redact.New(16, hashKey), tenant, `{
	  "emailsByKind": {"work": "ada@corp.com", "home": "bad"},
	  "phones": {"home": "+442071234567"}
	}`)
	assertAnswer(t, m, `{"phones": {"home": "*********4567"}}`)
	if got.Count != 2 {
		t.Errorf("count %d: the cleared map and the transformed one both changed", got.Count)
	}
}

func TestTransformsReachEveryElementOfAListAndEveryValueOfAMapOfMessages(t *testing.T) {
	m, got := applyProfile(t, redact.New(16, hashKey), tenant, `{
	  "devices": [{"ip": "10.20.30.40"}, {"ip": "10.21.0.1", "serial": "AB"}, {"ip": "not-an-ip", "serial": "ABCDEFG"}],
	  "devicesByName": {"a": {"ip": "10.20.30.40"}, "b": {"ip": "::1"}, "c": {"registered": "2023-11-05T08:09:10Z"}}
	}`)
	// An element whose value the arm cannot give loses that field alone: the
	// element is a message of its own, not a value of a list of scalars.
	assertAnswer(t, m, `{
	  "devices": [{"ip": "10.20.0.0"}, {"ip": "10.21.0.0", "serial": "**"}, {"serial": "***DEFG"}],
	  "devicesByName": {"a": {"ip": "10.20.0.0"}, "b": {"ip": "::"}, "c": {"registered": "2023-11-05T00:00:00Z"}}
	}`)
	if got.Count != 4 {
		t.Errorf("count %d: devices.ip, devices.serial, devices_by_name.ip and devices_by_name.registered changed", got.Count)
	}
}

func TestDateGrainTruncatesTimestampFields(t *testing.T) {
	m, _ := applyProfile(t, redact.New(16, hashKey), tenant, `{
	  "born": "2024-03-17T13:45:30Z", "joined": "2024-03-17T13:45:30Z", "seen": "2024-03-17T13:45:30.25Z"
	}`)
	assertAnswer(t, m, `{"born": "2024-01-01T00:00:00Z", "joined": "2024-03-01T00:00:00Z", "seen": "2024-03-17T00:00:00Z"}`)
}

func TestHashIsTheSameForEveryTenantUnlessSaltedPerTenant(t *testing.T) {
	r := redact.New(16, hashKey)
	const body = `{"reference": "REF-1", "tenantReference": "REF-1"}`
	cases := []struct {
		tenant string
		want   string
	}{
		{"acme", fmt.Sprintf(`{"reference": %q, "tenantReference": %q}`, hashOf("", "REF-1"), hashOf("acme", "REF-1"))},
		{"globex", fmt.Sprintf(`{"reference": %q, "tenantReference": %q}`, hashOf("", "REF-1"), hashOf("globex", "REF-1"))},
		// Without a tenant a per-tenant hash has no key of its own: omitted.
		{"", fmt.Sprintf(`{"reference": %q}`, hashOf("", "REF-1"))},
	}
	for _, tc := range cases {
		m, got := applyProfile(t, r, tc.tenant, body)
		assertAnswer(t, m, tc.want)
		if got.Count != 2 {
			t.Errorf("tenant %q: count %d, both fields changed", tc.tenant, got.Count)
		}
	}
	m, _ := applyProfile(t, redact.New(16, nil), "acme", body)
	assertAnswer(t, m, `{}`)
}

func TestAValueATransformLeavesAsItWasIsNotCounted(t *testing.T) {
	unchanged := `{
	  "code": "[REDACTED]", "codeWord": "<hidden>", "email": "***@corp.com", "phone": "****", "bio": "abc",
	  "note": "12345678", "ip": "10.1.2.0", "ip6": "2001:db8:85a3::",
	  "homepage": "https://x.com", "born": "2024-01-01T00:00:00Z", "joined": "2024-03-01T00:00:00Z",
	  "seen": "2024-03-17T00:00:00Z", "emails": ["***@x.com"], "phones": {"home": "**"},
	  "logins": ["2024-03-17T00:00:00Z"], "milestones": {"m": "2024-03-01T00:00:00Z"}
	}`
	m, got := applyProfile(t, redact.New(16, hashKey), tenant, unchanged)
	if got.Count != 0 {
		t.Errorf("count %d for an answer every arm leaves as it was", got.Count)
	}
	assertAnswer(t, m, unchanged)
	// card_bin_last4 of a value already starred is no card: omitted, counted.
	_, got = applyProfile(t, redact.New(16, hashKey), tenant, `{"bio": "abc", "score": "0", "card": "411111******1111"}`)
	if got.Count != 2 {
		t.Errorf("count %d: score and card were omitted, bio left as it was", got.Count)
	}
}

func TestAnArmOnAFieldOfAnotherKindOmits(t *testing.T) {
	profile := tool(t, "get_profile")
	cases := []struct {
		path   string
		onDeny *toolv1.Redaction
		body   string
	}{
		{"score", &toolv1.Redaction{Kind: &toolv1.Redaction_Mask_{Mask: &toolv1.Redaction_Mask{}}}, `{"score": "7"}`},
		{"avatar", &toolv1.Redaction{Kind: &toolv1.Redaction_Hash_{Hash: &toolv1.Redaction_Hash{}}}, `{"avatar": "AAEC"}`},
		{"born", &toolv1.Redaction{Kind: &toolv1.Redaction_Mask_{Mask: &toolv1.Redaction_Mask{}}}, `{"born": "2024-03-17T13:45:30Z"}`},
		{"code", &toolv1.Redaction{Kind: &toolv1.Redaction_DateGrain_{DateGrain: &toolv1.Redaction_DateGrain{Grain: toolv1.Grain_GRAIN_DAY}}}, `{"code": "2024"}`},
		{"devices", &toolv1.Redaction{Kind: &toolv1.Redaction_Mask_{Mask: &toolv1.Redaction_Mask{}}}, `{"devices": [{"name": "n"}]}`},
		{"code", nil, `{"code": "c"}`},
	}
	for _, tc := range cases {
		t.Run(tc.path, func(t *testing.T) {
			broken := withOnDeny(t, profile, tc.path, tc.onDeny)
			m := answer(t, broken, tc.body)
			got, err := redact.New(16, hashKey).Apply(broken, shapeOf(t, unspecified), tenant, m)
			if err != nil {
				t.Fatal(err)
			}
			if m.Has(profile.Output.Fields().ByName(protoreflect.Name(tc.path))) || got.Count == 0 {
				t.Fatalf("on_deny %v on %s left %v, count %d", tc.onDeny, tc.path, m, got.Count)
			}
		})
	}
}

// withOnDeny is t with a copy of its output plan in which the rule at path
// has another on_deny, one lint L5 would refuse.
func withOnDeny(tb testing.TB, t *call.Tool, path string, onDeny *toolv1.Redaction) *call.Tool {
	tb.Helper()
	plan := proto.Clone(t.OutputPlan).(*planv1.MessagePlan)
	i := slices.IndexFunc(plan.GetRules(), func(r *planv1.FieldRule) bool { return r.GetPath() == path })
	if i < 0 {
		tb.Fatalf("no rule %q", path)
	}
	plan.GetRules()[i].OnDeny = onDeny
	broken := *t
	broken.OutputPlan = plan
	return &broken
}
