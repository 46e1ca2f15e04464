package redact

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"net/netip"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// defaultMask is what mask writes when its declaration says nothing.
const defaultMask = "[REDACTED]"

// ellipsis closes a truncated value, so that a reader can tell it from a
// short one.
const ellipsis = "…"

// hashBytes is how much of the HMAC the hash arm shows: enough that two
// values do not collide in practice, short enough to stay a handle.
const hashBytes = 16

// minCardDigits is the shortest card number card_bin_last4 shows any of:
// below it first six and last four would leave too few digits hidden.
const minCardDigits = 12

// minTimestamp and maxTimestamp bound the seconds of a valid
// google.protobuf.Timestamp: the years 1 to 9999, inclusive, in UTC.
var (
	minTimestamp = time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC).Unix()
	maxTimestamp = time.Date(10000, time.January, 1, 0, 0, 0, 0, time.UTC).Unix() - 1
)

// timestampName is the one message kind date_grain applies to.
const timestampName protoreflect.FullName = "google.protobuf.Timestamp"

// armKind is which transform an arm applies. The zero value omits, so an
// arm nobody filled in withholds everything.
type armKind uint8

const (
	armOmit armKind = iota
	armMask
	armHash
	armEmailDomain
	armKeepLast
	armTruncate
	armCardBinLast4
	armIPPrefix
	armURLOrigin
	armDateGrain
)

// arm is one denied rule's on_deny, read once per resolution so that each
// instance costs a switch, not a walk of the Redaction message.
type arm struct {
	kind      armKind
	text      string // mask: the replacement, its default already applied
	n         uint32 // keep_last and truncate: how much; ip_prefix: bits
	runes     bool   // keep_last and truncate: n counts runes, not bytes
	perTenant bool   // hash: key with the caller's tenant
	grain     toolv1.Grain
}

// armOf reads on_deny. Whatever cannot apply to any value — no arm, an arm
// without its message, n = 0, an unspecified or unknown grain, an arm this
// build does not know — becomes omit, which design 7.7 asks of every failure.
func armOf(r *toolv1.Redaction) arm {
	switch k := r.GetKind().(type) {
	case *toolv1.Redaction_Mask_:
		if k.Mask == nil {
			break
		}
		with := k.Mask.GetWith()
		if with == "" {
			with = defaultMask
		}
		return arm{kind: armMask, text: with}
	case *toolv1.Redaction_Hash_:
		if k.Hash != nil {
			return arm{kind: armHash, perTenant: k.Hash.GetPerTenantSalt()}
		}
	case *toolv1.Redaction_EmailDomain_:
		if k.EmailDomain != nil {
			return arm{kind: armEmailDomain}
		}
	case *toolv1.Redaction_KeepLast_:
		if n := k.KeepLast.GetN(); n > 0 {
			return arm{kind: armKeepLast, n: n, runes: k.KeepLast.GetRunes()}
		}
	case *toolv1.Redaction_Truncate_:
		if n := k.Truncate.GetN(); n > 0 {
			return arm{kind: armTruncate, n: n, runes: k.Truncate.GetRunes()}
		}
	case *toolv1.Redaction_CardBinLast4_:
		if k.CardBinLast4 != nil {
			return arm{kind: armCardBinLast4}
		}
	case *toolv1.Redaction_IpPrefix_:
		if k.IpPrefix != nil {
			return arm{kind: armIPPrefix, n: k.IpPrefix.GetBits()}
		}
	case *toolv1.Redaction_UrlOrigin_:
		if k.UrlOrigin != nil {
			return arm{kind: armURLOrigin}
		}
	case *toolv1.Redaction_DateGrain_:
		switch g := k.DateGrain.GetGrain(); g {
		case toolv1.Grain_GRAIN_DAY, toolv1.Grain_GRAIN_MONTH, toolv1.Grain_GRAIN_YEAR:
			return arm{kind: armDateGrain, grain: g}
		}
	}
	return arm{kind: armOmit}
}

// transformString is a's result for one string value, or false where the
// field must be omitted instead. A result that is not valid UTF-8 omits: a
// proto3 string holding one would fail the answer's encoding, and a byte
// count that splits a rune shows a fragment of it.
func (a *arm) transformString(v string, k *hashKeys) (string, bool) {
	var out string
	ok := true
	switch a.kind {
	case armMask:
		out = a.text
	case armHash:
		out, ok = hashValue(k.mac(a.perTenant), v)
	case armEmailDomain:
		out, ok = emailDomain(v)
	case armKeepLast:
		out, ok = keepLast(v, a.n, a.runes)
	case armTruncate:
		out, ok = truncate(v, a.n, a.runes)
	case armCardBinLast4:
		out, ok = cardBinLast4(v)
	case armIPPrefix:
		out, ok = ipPrefix(v, a.n)
	case armURLOrigin:
		out, ok = urlOrigin(v)
	default:
		return "", false
	}
	if !ok || !utf8.ValidString(out) {
		return "", false
	}
	return out, true
}

// transformTimestamp applies a to ts, a google.protobuf.Timestamp, in place,
// reading it by field number since answers are dynamic messages. changed is
// false when the value already sat on its grain; ok is false where the field
// must be omitted instead, and ts is then left as it was.
func (a *arm) transformTimestamp(ts protoreflect.Message) (changed, ok bool) {
	if a.kind != armDateGrain {
		return false, false
	}
	fields := ts.Descriptor().Fields()
	secondsFd, nanosFd := fields.ByNumber(1), fields.ByNumber(2)
	if secondsFd == nil || nanosFd == nil || secondsFd.IsList() || nanosFd.IsList() ||
		secondsFd.Kind() != protoreflect.Int64Kind || nanosFd.Kind() != protoreflect.Int32Kind {
		return false, false
	}
	seconds, nanos := ts.Get(secondsFd).Int(), int32(ts.Get(nanosFd).Int())
	out, ok := dateGrain(seconds, nanos, a.grain)
	if !ok {
		return false, false
	}
	if out == seconds && nanos == 0 {
		return false, true
	}
	ts.Set(secondsFd, protoreflect.ValueOfInt64(out))
	ts.Clear(nanosFd)
	return true, true
}

// isTimestamp reports whether fd's values (a list's elements, a map's
// values) are google.protobuf.Timestamp messages.
func isTimestamp(fd protoreflect.FieldDescriptor) bool {
	md := fd.Message()
	return md != nil && md.FullName() == timestampName
}

// hashKeys derives the hash arm's HMACs for one call, each at most once and
// only when a hash arm meets a value: most answers hash nothing, and a
// tenant's key is never kept beyond its call.
type hashKeys struct {
	key    []byte
	tenant string
	plain  hash.Hash
	salted hash.Hash
}

// mac is the HMAC the hash arm keys with, or nil where it must omit: without
// a key an HMAC is a plain digest anyone can reverse by guessing, and a
// per-tenant salt without a tenant would key every tenant alike.
func (k *hashKeys) mac(perTenant bool) hash.Hash {
	if len(k.key) == 0 {
		return nil
	}
	if !perTenant {
		if k.plain == nil {
			k.plain = hmac.New(sha256.New, k.key)
		}
		return k.plain
	}
	if k.tenant == "" {
		return nil
	}
	if k.salted == nil {
		derive := hmac.New(sha256.New, k.key)
		derive.Write([]byte(k.tenant))
		k.salted = hmac.New(sha256.New, derive.Sum(nil))
	}
	return k.salted
}

// hashValue is the lowercase hex of the first hashBytes of mac over v.
func hashValue(mac hash.Hash, v string) (string, bool) {
	if mac == nil {
		return "", false
	}
	mac.Reset()
	mac.Write([]byte(v))
	var sum [sha256.Size]byte
	return hex.EncodeToString(mac.Sum(sum[:0])[:hashBytes]), true
}

// emailDomain is `***@domain`. It splits at the last '@', since a quoted
// local part may hold one and a domain never does.
func emailDomain(v string) (string, bool) {
	at := strings.LastIndexByte(v, '@')
	if at <= 0 || at == len(v)-1 {
		return "", false
	}
	domain := v[at+1:]
	if strings.IndexFunc(domain, unicode.IsSpace) >= 0 {
		return "", false
	}
	return "***@" + domain, true
}

// keepLast is one star per hidden byte (or rune) and the last n as they
// are; a value of n or fewer is all stars, so that its length is all it
// shows. A byte count that splits a rune is caught by transformString.
func keepLast(v string, n uint32, runes bool) (string, bool) {
	if n == 0 {
		return "", false
	}
	size := len(v)
	if runes {
		size = utf8.RuneCountInString(v)
	}
	if uint64(size) <= uint64(n) {
		return strings.Repeat("*", size), true
	}
	hidden := size - int(n)
	cut := hidden
	if runes {
		cut = 0
		for range hidden {
			_, w := utf8.DecodeRuneInString(v[cut:])
			cut += w
		}
	}
	return strings.Repeat("*", hidden) + v[cut:], true
}

// truncate is the first n bytes (or runes) and an ellipsis; a value no
// longer than n is left as it is. Counting bytes, the cut backs off to the
// start of the rune it would split.
func truncate(v string, n uint32, runes bool) (string, bool) {
	if n == 0 {
		return "", false
	}
	cut := 0
	if runes {
		for count := uint32(0); cut < len(v); count++ {
			if count == n {
				return v[:cut] + ellipsis, true
			}
			_, w := utf8.DecodeRuneInString(v[cut:])
			cut += w
		}
		return v, true
	}
	if uint64(len(v)) <= uint64(n) {
		return v, true
	}
	cut = int(n)
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	return v[:cut] + ellipsis, true
}

// cardBinLast4 is the first six digits (the issuer), one star per hidden
// digit, and the last four. Spaces and hyphens, as cards are printed, are
// dropped; anything else that is not an ASCII digit omits.
func cardBinLast4(v string) (string, bool) {
	digits := make([]byte, 0, len(v))
	for i := range len(v) {
		switch c := v[i]; {
		case c == ' ' || c == '-':
		case c >= '0' && c <= '9':
			digits = append(digits, c)
		default:
			return "", false
		}
	}
	if len(digits) < minCardDigits {
		return "", false
	}
	for i := 6; i < len(digits)-4; i++ {
		digits[i] = '*'
	}
	return string(digits), true
}

// ipPrefix is the network address of v's prefix of bits, without the
// length. A zone names a host's interface, which is not part of a network,
// so an address with one omits.
func ipPrefix(v string, bits uint32) (string, bool) {
	addr, err := netip.ParseAddr(v)
	if err != nil || addr.Zone() != "" || uint64(bits) > uint64(addr.BitLen()) {
		return "", false
	}
	prefix, err := addr.Prefix(int(bits))
	if err != nil {
		return "", false
	}
	return prefix.Addr().String(), true
}

// urlOrigin is `scheme://host[:port]`: who serves a resource, without who
// asked for it (userinfo) or what they asked (path, query, fragment).
func urlOrigin(v string) (string, bool) {
	u, err := url.Parse(v)
	if err != nil || !u.IsAbs() || u.Opaque != "" || u.Host == "" {
		return "", false
	}
	return u.Scheme + "://" + u.Host, true
}

// dateGrain is the seconds of the start, in UTC, of the day, month or year
// holding the Timestamp (seconds, nanos). A Timestamp outside the range
// google.protobuf.Timestamp allows, or nanos outside a second, omits.
func dateGrain(seconds int64, nanos int32, grain toolv1.Grain) (int64, bool) {
	if seconds < minTimestamp || seconds > maxTimestamp || nanos < 0 || nanos >= 1e9 {
		return 0, false
	}
	year, month, day := time.Unix(seconds, 0).UTC().Date()
	switch grain {
	case toolv1.Grain_GRAIN_DAY:
	case toolv1.Grain_GRAIN_MONTH:
		day = 1
	case toolv1.Grain_GRAIN_YEAR:
		month, day = time.January, 1
	default:
		return 0, false
	}
	return time.Date(year, month, day, 0, 0, 0, 0, time.UTC).Unix(), true
}
