package grant

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

// claims is a verified grant's payload, read strictly: every claim read
// must have the JSON type SPEC 7.9 gives it, null included.
type claims struct {
	issuer   string
	audience []string
	jti      string
	expiry   time.Time
	issuedAt time.Time
	// notBefore is zero when the grant has no nbf.
	notBefore time.Time
	// hasAct is true when an act key is present, whatever its value.
	hasAct bool
	grant  grantClaim
	// task is garm_grant.task, clipped; read before anything else so that
	// it is known even when another claim is refused.
	task string
}

// grantClaim is garm_grant: what the approver approved.
type grantClaim struct {
	tool         string
	subject      string
	approver     string
	clearance    toolv1.Clearance
	compartments []string
	material     string
	hasMaterial  bool
}

// object is a JSON object's members, exactly as spelled.
type object map[string]json.RawMessage

// parseClaims reads a verified payload. It always returns claims, holding
// at least the task when the payload is an object that names one; the
// error says which claim is missing or malformed.
func parseClaims(payload []byte) (*claims, error) {
	c := &claims{}
	if !utf8.Valid(payload) {
		return c, errors.New("the payload is not valid UTF-8")
	}
	top, err := asObject(payload)
	if err != nil {
		return c, errors.New("the payload is not a JSON object")
	}
	c.task = task(top)
	if c.issuer, err = requiredString(top, "iss"); err != nil {
		return c, err
	}
	if c.audience, err = audienceClaim(top); err != nil {
		return c, err
	}
	if c.jti, err = requiredString(top, "jti"); err != nil {
		return c, err
	}
	if c.expiry, err = requiredDate(top, "exp"); err != nil {
		return c, err
	}
	if c.issuedAt, err = requiredDate(top, "iat"); err != nil {
		return c, err
	}
	if _, ok := top["nbf"]; ok {
		if c.notBefore, err = requiredDate(top, "nbf"); err != nil {
			return c, err
		}
	}
	_, c.hasAct = top["act"]
	raw, ok := top["garm_grant"]
	if !ok {
		return c, errors.New("claim garm_grant is missing")
	}
	g, err := asObject(raw)
	if err != nil {
		return c, errors.New("claim garm_grant is not an object")
	}
	c.grant, err = parseGrant(g)
	return c, err
}

// parseGrant reads garm_grant. Members it does not know are ignored, so an
// issuer may record more about an approval than garmd checks.
func parseGrant(g object) (grantClaim, error) {
	var out grantClaim
	var err error
	for _, f := range []struct {
		name string
		to   *string
	}{{"tool", &out.tool}, {"subject", &out.subject}, {"approver", &out.approver}} {
		if *f.to, err = requiredString(g, "garm_grant."+f.name); err != nil {
			return out, err
		}
		if *f.to == "" {
			return out, fmt.Errorf("claim garm_grant.%s is empty", f.name)
		}
	}
	clearance, err := requiredString(g, "garm_grant.approver_clearance")
	if err != nil {
		return out, err
	}
	var ok bool
	if out.clearance, ok = parseClearance(clearance); !ok {
		return out, errors.New("claim garm_grant.approver_clearance is not a known, specified clearance")
	}
	if out.compartments, err = stringList(g, "garm_grant.approver_compartments"); err != nil {
		return out, err
	}
	if _, out.hasMaterial = g["material"]; out.hasMaterial {
		if out.material, err = requiredString(g, "garm_grant.material"); err != nil {
			return out, err
		}
	}
	return out, nil
}

// unverifiedTask is garm_grant.task from a grant that did not verify: it
// is recorded, as SPEC 7.9 asks, and trusted for nothing.
func unverifiedTask(grant string) string {
	_, rest, ok := strings.Cut(grant, ".")
	if !ok {
		return ""
	}
	encoded, _, ok := strings.Cut(rest, ".")
	if !ok {
		return ""
	}
	payload, err := base64.RawURLEncoding.Strict().DecodeString(encoded)
	if err != nil {
		return ""
	}
	top, err := asObject(payload)
	if err != nil {
		return ""
	}
	return task(top)
}

// task is garm_grant.task clipped to MaxTaskBytes, or "" when the payload
// holds no string there.
func task(top object) string {
	raw, ok := top["garm_grant"]
	if !ok {
		return ""
	}
	g, err := asObject(raw)
	if err != nil {
		return ""
	}
	raw, ok = g["task"]
	if !ok {
		return ""
	}
	s, err := stringValue(raw, "garm_grant.task")
	if err != nil {
		return ""
	}
	return clipUTF8(strings.ToValidUTF8(s, "\uFFFD"), MaxTaskBytes)
}

// asObject is raw's members when raw is a JSON object.
func asObject(raw []byte) (object, error) {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 || raw[0] != '{' {
		return nil, errors.New("not an object")
	}
	var o object
	if err := json.Unmarshal(raw, &o); err != nil {
		return nil, err
	}
	return o, nil
}

// requiredString is the string member of o at path's last name; path names
// the claim in errors ("garm_grant.tool").
func requiredString(o object, path string) (string, error) {
	raw, ok := o[lastName(path)]
	if !ok {
		return "", fmt.Errorf("claim %s is missing", path)
	}
	return stringValue(raw, path)
}

func stringValue(raw json.RawMessage, path string) (string, error) {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", fmt.Errorf("claim %s is not a string", path)
	}
	return s, nil
}

// stringList is an optional array of strings; absent is empty.
func stringList(o object, path string) ([]string, error) {
	raw, ok := o[lastName(path)]
	if !ok {
		return nil, nil
	}
	var items []json.RawMessage
	if len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &items) != nil {
		return nil, fmt.Errorf("claim %s is not an array of strings", path)
	}
	out := make([]string, len(items))
	for i, item := range items {
		s, err := stringValue(item, path)
		if err != nil {
			return nil, fmt.Errorf("claim %s is not an array of strings", path)
		}
		out[i] = s
	}
	return out, nil
}

// audienceClaim is aud, a string or an array of strings; it is required.
func audienceClaim(o object) ([]string, error) {
	raw, ok := o["aud"]
	if !ok {
		return nil, errors.New("claim aud is missing")
	}
	if len(raw) > 0 && raw[0] == '"' {
		s, err := stringValue(raw, "aud")
		return []string{s}, err
	}
	aud, err := stringList(o, "aud")
	if err != nil {
		return nil, errors.New("claim aud is neither a string nor an array of strings")
	}
	return aud, nil
}

// maxNumericDate is the last second of year 9999: later dates are refused
// rather than overflowed.
const maxNumericDate = 253402300799

// requiredDate is a JWT NumericDate member: seconds since the epoch, a JSON
// number, possibly fractional, never negative.
func requiredDate(o object, name string) (time.Time, error) {
	raw, ok := o[name]
	if !ok {
		return time.Time{}, fmt.Errorf("claim %s is missing", name)
	}
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return time.Time{}, fmt.Errorf("claim %s is not a number", name)
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsNaN(f) || f < 0 || f > maxNumericDate {
		return time.Time{}, fmt.Errorf("claim %s is not a date", name)
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)).UTC(), nil
}

// parseClearance reads a clearance, bare or CLEARANCE_-prefixed, in any
// ASCII case, as a token's is read; unspecified is not a clearance. Only
// ASCII letters, digits and "_" are read, so that no Unicode case mapping
// can make two spellings of one name.
func parseClearance(s string) (toolv1.Clearance, bool) {
	const prefix, longest = "CLEARANCE_", 32
	if len(s) == 0 || len(s) > longest {
		return 0, false
	}
	up := make([]byte, 0, len(prefix)+len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z':
			c -= 'a' - 'A'
		case 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_':
		default:
			return 0, false
		}
		up = append(up, c)
	}
	name := string(up)
	if !strings.HasPrefix(name, prefix) {
		name = prefix + name
	}
	n, ok := toolv1.Clearance_value[name]
	if !ok || n == int32(toolv1.Clearance_CLEARANCE_UNSPECIFIED) {
		return 0, false
	}
	return toolv1.Clearance(n), true
}

func lastName(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[i+1:]
	}
	return path
}

// clipUTF8 is s cut to at most n bytes without splitting a character.
func clipUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// clip bounds a grant-supplied string before it is put in a refusal's
// detail.
func clip(s string) string {
	const max = 64
	if len(s) > max {
		return clipUTF8(s, max) + "…"
	}
	return s
}
