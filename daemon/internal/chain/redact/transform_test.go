package redact

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"strings"
	"testing"
	"time"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// testKey keys the hash arm in this file; hmacHex recomputes what it gives.
var testKey = []byte("transform-test-key-0123456789abc")

func onHash(perTenant bool) *toolv1.Redaction {
	return &toolv1.Redaction{Kind: &toolv1.Redaction_Hash_{Hash: &toolv1.Redaction_Hash{PerTenantSalt: perTenant}}}
}

func onEmailDomain() *toolv1.Redaction {
	return &toolv1.Redaction{Kind: &toolv1.Redaction_EmailDomain_{EmailDomain: &toolv1.Redaction_EmailDomain{}}}
}

func onKeepLast(n uint32, runes bool) *toolv1.Redaction {
	return &toolv1.Redaction{Kind: &toolv1.Redaction_KeepLast_{KeepLast: &toolv1.Redaction_KeepLast{N: n, Runes: runes, Reason: "r"}}}
}

func onTruncate(n uint32, runes bool) *toolv1.Redaction {
	return &toolv1.Redaction{Kind: &toolv1.Redaction_Truncate_{Truncate: &toolv1.Redaction_Truncate{N: n, Runes: runes, Reason: "r"}}}
}

func onCard() *toolv1.Redaction {
	return &toolv1.Redaction{Kind: &toolv1.Redaction_CardBinLast4_{CardBinLast4: &toolv1.Redaction_CardBinLast4{}}}
}

func onIPPrefix(bits uint32) *toolv1.Redaction {
	return &toolv1.Redaction{Kind: &toolv1.Redaction_IpPrefix_{IpPrefix: &toolv1.Redaction_IpPrefix{Bits: bits}}}
}

func onURLOrigin() *toolv1.Redaction {
	return &toolv1.Redaction{Kind: &toolv1.Redaction_UrlOrigin_{UrlOrigin: &toolv1.Redaction_UrlOrigin{}}}
}

func onDateGrain(g toolv1.Grain) *toolv1.Redaction {
	return &toolv1.Redaction{Kind: &toolv1.Redaction_DateGrain_{DateGrain: &toolv1.Redaction_DateGrain{Grain: g}}}
}

// hmacHex is the hash arm's result written out from crypto/hmac alone.
func hmacHex(key []byte, value string) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(value))
	return hex.EncodeToString(mac.Sum(nil)[:16])
}

// tenantKey is the per_tenant_salt key written out from crypto/hmac alone.
func tenantKey(key []byte, tenant string) []byte {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(tenant))
	return mac.Sum(nil)
}

// omits marks a case whose value the arm cannot give: the field is omitted.
const omits = "\x00omits"

func TestEachArmGivesItsValueOrOmits(t *testing.T) {
	cases := []struct {
		name   string
		onDeny *toolv1.Redaction
		in     string
		want   string
	}{
		{"no redaction", nil, "v", omits},
		{"no arm", &toolv1.Redaction{}, "v", omits},
		{"an arm without its message", &toolv1.Redaction{Kind: &toolv1.Redaction_Mask_{}}, "v", omits},
		{"omit", omit(), "v", omits},
		{"date_grain on a string", onDateGrain(toolv1.Grain_GRAIN_DAY), "2024-03-17", omits},

		{"mask by default", mask(""), "s3cr3t", defaultMask},
		{"mask with its own", mask("<hidden>"), "s3cr3t", "<hidden>"},
		{"mask an empty value", mask(""), "", defaultMask},

		{"hash", onHash(false), "DE89370400440532013000", hmacHex(testKey, "DE89370400440532013000")},
		{"hash per tenant", onHash(true), "DE89370400440532013000", hmacHex(tenantKey(testKey, "acme"), "DE89370400440532013000")},

		{"email", onEmailDomain(), "ada@corp.com", "***@corp.com"},
		{"email not an email", onEmailDomain(), "not-an-email", omits},
		{"email with two @ splits at the last", onEmailDomain(), "a@b@corp.com", "***@corp.com"},
		{"email with a quoted @", onEmailDomain(), `"a@b"@corp.com`, "***@corp.com"},
		{"email empty local part", onEmailDomain(), "@corp.com", omits},
		{"email empty domain", onEmailDomain(), "ada@", omits},
		{"email domain with a space", onEmailDomain(), "ada@corp com", omits},
		{"email domain with a tab", onEmailDomain(), "ada@corp.com\t", omits},
		{"email empty", onEmailDomain(), "", omits},

		{"keep_last runes", onKeepLast(4, true), "+442071234567", "*********4567"},
		{"keep_last shorter than n", onKeepLast(4, true), "12", "**"},
		{"keep_last exactly n", onKeepLast(4, true), "1234", "****"},
		{"keep_last empty", onKeepLast(4, true), "", ""},
		{"keep_last runes counts runes", onKeepLast(2, true), "日本語テスト", "****スト"},
		{"keep_last runes, short, a star per rune", onKeepLast(4, true), "日本", "**"},
		{"keep_last bytes", onKeepLast(2, false), "abcdef", "****ef"},
		{"keep_last bytes counts bytes", onKeepLast(3, false), "日本語テスト", strings.Repeat("*", 15) + "ト"},
		{"keep_last bytes, short, a star per byte", onKeepLast(4, false), "é", "**"},
		{"keep_last bytes splitting a rune", onKeepLast(2, false), "日本語テスト", omits},
		{"keep_last n = 0", onKeepLast(0, true), "+442071234567", omits},

		{"truncate runes", onTruncate(4, true), "aaaa日本語テスト", "aaaa…"},
		{"truncate runes exactly n", onTruncate(4, true), "aaaa", "aaaa"},
		{"truncate runes shorter", onTruncate(4, true), "日本語", "日本語"},
		{"truncate runes cuts after a wide rune", onTruncate(2, true), "日本語", "日本…"},
		{"truncate bytes exactly n", onTruncate(4, false), "abcd", "abcd"},
		{"truncate bytes", onTruncate(4, false), "abcdef", "abcd…"},
		{"truncate bytes backs off to a rune", onTruncate(5, false), "aaaa日本語", "aaaa…"},
		{"truncate bytes backs off from a rune's last byte", onTruncate(6, false), "aaaa日本語", "aaaa…"},
		{"truncate bytes at a rune's end", onTruncate(7, false), "aaaa日本語", "aaaa日…"},
		{"truncate bytes inside the first rune", onTruncate(1, false), "日本", "…"},
		{"truncate n = 0", onTruncate(0, true), "aaaa", omits},

		{"card", onCard(), "4111111111111111", "411111******1111"},
		{"card with spaces", onCard(), "4111 1111 1111 1111", "411111******1111"},
		{"card with hyphens", onCard(), "4111-1111-1111-1111", "411111******1111"},
		{"card of fifteen digits", onCard(), "378282246310005", "378282*****0005"},
		{"card of twelve digits", onCard(), "411111111111", "411111**1111"},
		{"card of eleven digits", onCard(), "41111111111", omits},
		{"card too short", onCard(), "4111", omits},
		{"card with a letter", onCard(), "4111x11111111111", omits},
		{"card with a dot", onCard(), "4111.1111.1111.1111", omits},
		{"card in full-width digits", onCard(), "４１１１１１１１１１１１１１１１", omits},

		{"ip v4", onIPPrefix(24), "10.1.2.77", "10.1.2.0"},
		{"ip v4 whole", onIPPrefix(32), "10.1.2.77", "10.1.2.77"},
		{"ip v4 bits 0", onIPPrefix(0), "10.1.2.77", "0.0.0.0"},
		{"ip v4 bits too large", onIPPrefix(33), "10.1.2.77", omits},
		{"ip v6", onIPPrefix(48), "2001:db8:85a3:1234::8a2e:370:7334", "2001:db8:85a3::"},
		{"ip v6 bits 0", onIPPrefix(0), "2001:db8::1", "::"},
		{"ip v6 bits 128", onIPPrefix(128), "2001:db8::1", "2001:db8::1"},
		{"ip v6 bits too large", onIPPrefix(129), "2001:db8::1", omits},
		{"ip v4 in v6", onIPPrefix(120), "::ffff:10.1.2.77", "::ffff:10.1.2.0"},
		{"ip with a zone", onIPPrefix(64), "fe80::1%eth0", omits},
		{"ip a prefix", onIPPrefix(24), "10.1.2.0/24", omits},
		{"ip leading zeros", onIPPrefix(24), "010.1.2.77", omits},
		{"ip not an ip", onIPPrefix(24), "not-an-ip", omits},
		{"ip bits beyond an int", onIPPrefix(math.MaxUint32), "10.1.2.77", omits},

		{"url", onURLOrigin(), "https://x.com/a/b?token=secret", "https://x.com"},
		{"url with a port", onURLOrigin(), "https://x.com:8443/p#frag", "https://x.com:8443"},
		{"url with userinfo", onURLOrigin(), "https://user:pw@x.com/p", "https://x.com"},
		{"url with an IPv6 host", onURLOrigin(), "http://[2001:db8::1]:8080/x", "http://[2001:db8::1]:8080"},
		{"url scheme in capitals", onURLOrigin(), "HTTPS://x.com/", "https://x.com"},
		{"url already an origin", onURLOrigin(), "https://x.com", "https://x.com"},
		{"url relative", onURLOrigin(), "/a/b?token=secret", omits},
		{"url without scheme", onURLOrigin(), "//x.com/a", omits},
		{"url mailto", onURLOrigin(), "mailto:ada@corp.com", omits},
		{"url without host", onURLOrigin(), "file:///etc/passwd", omits},
		{"url unparsable", onURLOrigin(), "https://x.com/%zz", omits},
		{"url empty", onURLOrigin(), "", omits},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := armOf(tc.onDeny)
			got, ok := a.transformString(tc.in, &hashKeys{key: testKey, tenant: "acme"})
			switch {
			case tc.want == omits && ok:
				t.Fatalf("%q gave %q, want it omitted", tc.in, got)
			case tc.want != omits && !ok:
				t.Fatalf("%q was omitted, want %q", tc.in, tc.want)
			case ok && got != tc.want:
				t.Fatalf("%q gave %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestHashIsKeyedAndPerTenantSaltKeysByTenant(t *testing.T) {
	const value = "REF-0001"
	hash := func(key []byte, perTenant bool, tenant string) (string, bool) {
		a := armOf(onHash(perTenant))
		return a.transformString(value, &hashKeys{key: key, tenant: tenant})
	}
	must := func(key []byte, perTenant bool, tenant string) string {
		t.Helper()
		got, ok := hash(key, perTenant, tenant)
		if !ok {
			t.Fatalf("hash omitted with key %q, per tenant %v, tenant %q", key, perTenant, tenant)
		}
		return got
	}
	plain := must(testKey, false, "acme")
	if plain != hmacHex(testKey, value) || len(plain) != 32 || strings.ToLower(plain) != plain {
		t.Errorf("hash %q, want %q: 32 lowercase hex digits", plain, hmacHex(testKey, value))
	}
	if again := must(testKey, false, "globex"); again != plain {
		t.Errorf("without a salt the tenant moved the hash: %q, %q", plain, again)
	}
	if other := must([]byte("another-key-0123456789abcdefghij"), false, "acme"); other == plain {
		t.Error("two keys gave one hash")
	}
	acme, globex := must(testKey, true, "acme"), must(testKey, true, "globex")
	if acme != hmacHex(tenantKey(testKey, "acme"), value) {
		t.Errorf("per tenant %q, want %q", acme, hmacHex(tenantKey(testKey, "acme"), value))
	}
	if acme == globex || acme == plain {
		t.Errorf("per-tenant hashes %q (acme), %q (globex) and the plain %q must all differ", acme, globex, plain)
	}
	if again := must(testKey, true, "acme"); again != acme {
		t.Errorf("one tenant hashed one value twice to %q and %q", acme, again)
	}
	if got, ok := hash(testKey, true, ""); ok {
		t.Errorf("a per-tenant hash without a tenant gave %q", got)
	}
	if got, ok := hash(nil, false, "acme"); ok {
		t.Errorf("a hash without a key gave %q", got)
	}
}

func TestDateGrainTruncatesATimestampInUTC(t *testing.T) {
	at := func(s string) *timestamppb.Timestamp {
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return timestamppb.New(tm)
	}
	cases := []struct {
		name    string
		onDeny  *toolv1.Redaction
		in      *timestamppb.Timestamp
		want    string // "" omits
		changed bool
	}{
		{"year", onDateGrain(toolv1.Grain_GRAIN_YEAR), at("2024-03-17T13:45:30Z"), "2024-01-01T00:00:00Z", true},
		{"month", onDateGrain(toolv1.Grain_GRAIN_MONTH), at("2024-03-17T13:45:30Z"), "2024-03-01T00:00:00Z", true},
		{"day", onDateGrain(toolv1.Grain_GRAIN_DAY), at("2024-03-17T13:45:30.5Z"), "2024-03-17T00:00:00Z", true},
		{"day in UTC, not the writer's zone", onDateGrain(toolv1.Grain_GRAIN_DAY), at("2024-03-17T23:30:00-05:00"), "2024-03-18T00:00:00Z", true},
		{"before the epoch", onDateGrain(toolv1.Grain_GRAIN_DAY), at("1969-07-20T20:17:40Z"), "1969-07-20T00:00:00Z", true},
		{"nanos alone", onDateGrain(toolv1.Grain_GRAIN_DAY), at("2024-03-17T00:00:00.000000001Z"), "2024-03-17T00:00:00Z", true},
		{"already on its grain", onDateGrain(toolv1.Grain_GRAIN_MONTH), at("2024-03-01T00:00:00Z"), "2024-03-01T00:00:00Z", false},
		{"the earliest", onDateGrain(toolv1.Grain_GRAIN_YEAR), at("0001-05-01T00:00:00Z"), "0001-01-01T00:00:00Z", true},
		{"the latest", onDateGrain(toolv1.Grain_GRAIN_YEAR), at("9999-12-31T23:59:59Z"), "9999-01-01T00:00:00Z", true},
		{"unspecified", onDateGrain(toolv1.Grain_GRAIN_UNSPECIFIED), at("2024-03-17T13:45:30Z"), "", false},
		{"an unknown grain", onDateGrain(toolv1.Grain(9)), at("2024-03-17T13:45:30Z"), "", false},
		{"nanos below zero", onDateGrain(toolv1.Grain_GRAIN_DAY), &timestamppb.Timestamp{Seconds: 1710683130, Nanos: -1}, "", false},
		{"nanos of a whole second", onDateGrain(toolv1.Grain_GRAIN_DAY), &timestamppb.Timestamp{Seconds: 1710683130, Nanos: 1e9}, "", false},
		{"before year 1", onDateGrain(toolv1.Grain_GRAIN_DAY), &timestamppb.Timestamp{Seconds: -62135596801}, "", false},
		{"after year 9999", onDateGrain(toolv1.Grain_GRAIN_DAY), &timestamppb.Timestamp{Seconds: 253402300800}, "", false},
		{"a string arm on a Timestamp", onTruncate(4, false), at("2024-03-17T13:45:30Z"), "", false},
		{"omit", omit(), at("2024-03-17T13:45:30Z"), "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := armOf(tc.onDeny)
			before := &timestamppb.Timestamp{Seconds: tc.in.GetSeconds(), Nanos: tc.in.GetNanos()}
			changed, ok := a.transformTimestamp(tc.in.ProtoReflect())
			switch {
			case tc.want == "" && ok:
				t.Fatalf("%v gave %v, want it omitted", before, tc.in.AsTime())
			case tc.want == "" && (tc.in.GetSeconds() != before.GetSeconds() || tc.in.GetNanos() != before.GetNanos()):
				t.Fatalf("an omitted %v was changed to %v", before, tc.in)
			case tc.want != "" && !ok:
				t.Fatalf("%v was omitted, want %s", before, tc.want)
			case ok && (tc.in.AsTime().Format(time.RFC3339Nano) != tc.want || tc.in.GetNanos() != 0):
				t.Fatalf("%v gave %s (nanos %d), want %s", before, tc.in.AsTime().Format(time.RFC3339Nano), tc.in.GetNanos(), tc.want)
			case changed != tc.changed:
				t.Fatalf("changed %v, want %v", changed, tc.changed)
			}
		})
	}
}
