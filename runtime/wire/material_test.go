package wire_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/garm-dev/garm/runtime/wire"
)

// referenceDigest is design 7.9's reference vector.
const referenceDigest = "sha256:050767261c6a70af99c68e72344389981e728a40661ace42936a6d3d00ac9f71"

var referencePaths = []string{"amount_minor_units", "beneficiary_iban", "currency_code"}

func referencePayment(t testing.TB) *dynamicpb.Message {
	return newPayment(t, map[string]any{
		"amount_minor_units": int64(125000),
		"beneficiary_iban":   "GB29NWBK60161331926819",
		"currency_code":      "GBP",
	})
}

func TestTheReferenceVectorHoldsForTextsAndForARequest(t *testing.T) {
	texts := map[string]string{
		"amount_minor_units": "125000",
		"beneficiary_iban":   "GB29NWBK60161331926819",
		"currency_code":      "GBP",
	}
	if got := wire.MaterialDigest(texts); got != referenceDigest {
		t.Errorf("MaterialDigest = %s, want %s", got, referenceDigest)
	}
	// The same, spelt out as design 7.9 describes the pre-image.
	sum := sha256.Sum256([]byte("amount_minor_units=125000\nbeneficiary_iban=GB29NWBK60161331926819\ncurrency_code=GBP\n"))
	if want := "sha256:" + hex.EncodeToString(sum[:]); want != referenceDigest {
		t.Errorf("the design's pre-image hashes to %s, not the reference", want)
	}

	req := referencePayment(t)
	got, err := wire.RequestMaterialDigest(req, referencePaths)
	if err != nil {
		t.Fatal(err)
	}
	if got != referenceDigest {
		t.Errorf("RequestMaterialDigest = %s, want %s", got, referenceDigest)
	}
	gotTexts, err := wire.MaterialTexts(req, referencePaths)
	if err != nil {
		t.Fatal(err)
	}
	if len(gotTexts) != len(texts) {
		t.Fatalf("MaterialTexts = %q, want %q", gotTexts, texts)
	}
	for path, want := range texts {
		if gotTexts[path] != want {
			t.Errorf("MaterialTexts[%s] = %q, want %q", path, gotTexts[path], want)
		}
	}
}

func TestTheOrderOfThePathsDoesNotChangeTheDigest(t *testing.T) {
	req := referencePayment(t)
	for _, paths := range [][]string{
		{"currency_code", "beneficiary_iban", "amount_minor_units"},
		{"beneficiary_iban", "amount_minor_units", "currency_code"},
		{"currency_code", "amount_minor_units", "beneficiary_iban", "currency_code"},
	} {
		got, err := wire.RequestMaterialDigest(req, paths)
		if err != nil {
			t.Fatal(err)
		}
		if got != referenceDigest {
			t.Errorf("paths %q: %s, want %s", paths, got, referenceDigest)
		}
	}
}

func TestAbsentIsDistinctFromEmptyFromZeroAndFromALookalike(t *testing.T) {
	seen := map[string]string{}
	for _, text := range []string{wire.Unset, "", "0", wire.Unset + " "} {
		digest := wire.MaterialDigest(map[string]string{"memo": text})
		if other, dup := seen[digest]; dup {
			t.Errorf("%q and %q have the same digest", text, other)
		}
		seen[digest] = text
	}

	// The same four, read from requests: a field with presence tells
	// absent from empty and zero.
	cases := []struct {
		name   string
		fields map[string]any
		path   string
		want   string
	}{
		{"an optional string never set", nil, "memo", wire.Unset},
		{"an optional string set empty", map[string]any{"memo": ""}, "memo", ""},
		{"an optional integer set to zero", map[string]any{"optional_amount": int64(0)}, "optional_amount", "0"},
		{"a string that only starts like absent", map[string]any{"memo": wire.Unset + " "}, "memo", wire.Unset + " "},
		// A proto3 scalar without presence cannot carry zero apart from
		// absent on the wire, and neither can its text.
		{"a proto3 integer left at zero", map[string]any{"amount_minor_units": int64(0)}, "amount_minor_units", wire.Unset},
		{"a proto3 string left empty", map[string]any{"currency_code": ""}, "currency_code", wire.Unset},
		{"a proto3 bool left false", map[string]any{"urgent": false}, "urgent", wire.Unset},
		{"a proto3 enum left at zero", map[string]any{"priority": protoreflect.EnumNumber(0)}, "priority", wire.Unset},
	}
	for _, c := range cases {
		got, err := wire.MaterialText(newPayment(t, c.fields), c.path)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestAValueCannotForgeAnotherLine(t *testing.T) {
	pairs := []struct {
		name string
		a, b map[string]string
	}{
		{"a newline", map[string]string{"a": "1\nb=2"}, map[string]string{"a": "1", "b": "2"}},
		{"a carriage return", map[string]string{"a": "1\r\nb=2"}, map[string]string{"a": "1\r", "b": "2"}},
		{"an escaped newline spelt out", map[string]string{"a": `1\nb=2`}, map[string]string{"a": "1\nb=2"}},
		{"a trailing backslash", map[string]string{"a": `1\`, "b": "2"}, map[string]string{"a": `1\` + "\n" + "b=2"}},
		{"an equals sign in a path", map[string]string{"a=b": "c"}, map[string]string{"a": "b=c"}},
		{"a newline in a path", map[string]string{"a=1\nb": "2"}, map[string]string{"a": "1", "b": "2"}},
	}
	for _, p := range pairs {
		if wire.MaterialDigest(p.a) == wire.MaterialDigest(p.b) {
			t.Errorf("%s: %q and %q have the same digest", p.name, p.a, p.b)
		}
	}
}

func TestEveryIntegerKindIsDecimal(t *testing.T) {
	req := newPayment(t, map[string]any{
		"i32": int32(math.MinInt32), "s32": int32(-7), "sf32": int32(math.MaxInt32),
		"amount_minor_units": int64(-1), "s64": int64(math.MinInt64), "sf64": int64(math.MaxInt64),
		"u32": uint32(math.MaxUint32), "f32": uint32(1), "u64": uint64(math.MaxUint64), "f64": uint64(42),
		"urgent": true,
	})
	want := map[string]string{
		"i32": "-2147483648", "s32": "-7", "sf32": "2147483647",
		"amount_minor_units": "-1", "s64": "-9223372036854775808", "sf64": "9223372036854775807",
		"u32": "4294967295", "f32": "1", "u64": "18446744073709551615", "f64": "42",
		"urgent": "true",
	}
	for path, w := range want {
		got, err := wire.MaterialText(req, path)
		if err != nil || got != w {
			t.Errorf("%s: %q, %v; want %q", path, got, err, w)
		}
	}
}

func TestEnumsAreSpeltByTheirValueName(t *testing.T) {
	got, err := wire.MaterialText(newPayment(t, map[string]any{"priority": protoreflect.EnumNumber(2)}), "priority")
	if err != nil || got != "PRIORITY_HIGH" {
		t.Errorf("priority: %q, %v; want PRIORITY_HIGH", got, err)
	}
	_, err = wire.MaterialText(newPayment(t, map[string]any{"priority": protoreflect.EnumNumber(7713)}), "priority")
	if !errors.Is(err, wire.ErrMaterialValue) {
		t.Fatalf("an enum number with no name: %v, want ErrMaterialValue", err)
	}
	if strings.Contains(err.Error(), "7713") {
		t.Errorf("the error quotes the request's value: %v", err)
	}
}

func TestANestedPathGoesThroughSingularMessagesAndAnAbsentParentIsUnset(t *testing.T) {
	cases := []struct {
		name   string
		fields map[string]any
		path   string
		want   string
	}{
		{"a set leaf two messages down", map[string]any{"beneficiary.bank.bic": "NWBKGB2L"}, "beneficiary.bank.bic", "NWBKGB2L"},
		{"a set leaf one message down", map[string]any{"beneficiary.iban": "GB29"}, "beneficiary.iban", "GB29"},
		{"an absent parent", nil, "beneficiary.iban", wire.Unset},
		{"an absent grandparent", nil, "beneficiary.bank.bic", wire.Unset},
		{"a present parent, absent child message", map[string]any{"beneficiary.name": "Ada"}, "beneficiary.bank.bic", wire.Unset},
		{"a oneof member message when the other is set", map[string]any{"sort_code": "601613"}, "via.iban", wire.Unset},
		{"a oneof member message that is set", map[string]any{"via.iban": "GB29"}, "via.iban", "GB29"},
		{"a oneof member string that is set", map[string]any{"sort_code": "601613"}, "sort_code", "601613"},
	}
	for _, c := range cases {
		got, err := wire.MaterialText(newPayment(t, c.fields), c.path)
		if err != nil || got != c.want {
			t.Errorf("%s: %q, %v; want %q", c.name, got, err, c.want)
		}
	}
	// An empty read-only message (a nil generated message reads as one) has
	// every field absent.
	empty := dynamicpb.NewMessageType(paymentDescriptor).Zero()
	if got, err := wire.MaterialText(empty, "beneficiary.bank.bic"); err != nil || got != wire.Unset {
		t.Errorf("an empty message: %q, %v; want %q", got, err, wire.Unset)
	}
}

func TestPathsWithNoCanonicalTextAreRefusedWhateverTheRequestHolds(t *testing.T) {
	full := newPayment(t, map[string]any{
		"rate": 1.5, "ratio": float32(0.5), "blob": []byte("x"), "amount_minor_units": int64(1),
		"beneficiary.iban": "GB29", "memo": "m",
	})
	full.Mutable(paymentDescriptor.Fields().ByName("tags")).List().Append(protoreflect.ValueOfString("t"))
	full.Mutable(paymentDescriptor.Fields().ByName("others")).List().AppendMutable()
	for _, path := range []string{
		"rate", "ratio", "blob", // float, double, bytes
		"tags", "labels", "others", "by_name", "priorities", // lists and maps as the leaf
		"others.iban", "by_name.iban", "labels.key", // through a list or map
		"beneficiary", "beneficiary.bank", // a message leaf
		"amount_minor_units.x", "memo.length", "priority.name", // on through a non-message
		"", ".", "beneficiary.", ".beneficiary", "beneficiary..iban", // empty path or segment
		"nope", "beneficiary.nope", "Beneficiary.iban", "amountMinorUnits", // no such field
	} {
		for name, req := range map[string]protoreflect.Message{"empty": newPayment(t, nil), "full": full} {
			got, err := wire.MaterialText(req, path)
			if !errors.Is(err, wire.ErrMaterialPath) || got != "" {
				t.Errorf("%q in the %s request: %q, %v; want ErrMaterialPath", path, name, got, err)
			}
		}
	}
	if _, err := wire.MaterialTexts(full, []string{"amount_minor_units", "rate"}); !errors.Is(err, wire.ErrMaterialPath) {
		t.Errorf("MaterialTexts with one bad path: %v", err)
	}
	if _, err := wire.RequestMaterialDigest(full, []string{"blob"}); !errors.Is(err, wire.ErrMaterialPath) {
		t.Errorf("RequestMaterialDigest with a bad path: %v", err)
	}
}

func TestTheLiteralUnsetStringIsRefused(t *testing.T) {
	for _, path := range []string{"currency_code", "memo", "beneficiary.bank.bic"} {
		req := newPayment(t, map[string]any{path: wire.Unset})
		got, err := wire.MaterialText(req, path)
		if !errors.Is(err, wire.ErrMaterialValue) || got != "" {
			t.Errorf("%s holding %q: %q, %v; want ErrMaterialValue", path, wire.Unset, got, err)
		}
		if _, err := wire.RequestMaterialDigest(req, []string{path}); !errors.Is(err, wire.ErrMaterialValue) {
			t.Errorf("RequestMaterialDigest over %s: %v", path, err)
		}
	}
}

func TestNoErrorQuotesAValueOfTheRequest(t *testing.T) {
	const secret = "GB00SECRET"
	req := newPayment(t, map[string]any{
		"beneficiary_iban": secret, "memo": secret, "rate": 3.25, "blob": []byte(secret),
		"beneficiary.iban": secret, "priority": protoreflect.EnumNumber(31337),
	})
	for _, path := range []string{"rate", "blob", "beneficiary", "beneficiary_iban.x", "memo.x", "priority", "beneficiary.iban.x"} {
		_, err := wire.MaterialText(req, path)
		if err == nil {
			t.Errorf("%s: no error", path)
			continue
		}
		for _, value := range []string{secret, "3.25", "31337"} {
			if strings.Contains(err.Error(), value) {
				t.Errorf("%s: the error quotes %q: %v", path, value, err)
			}
		}
	}
	if _, err := wire.MaterialText(nil, "memo"); !errors.Is(err, wire.ErrMaterialValue) {
		t.Errorf("no request: %v, want ErrMaterialValue", err)
	}
}
