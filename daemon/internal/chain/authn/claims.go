package authn

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/garm-dev/garm/daemon/internal/call"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

// MaxDepth is the most levels a token's chain may have: the subject and its
// actors (SPEC 7.5).
const MaxDepth = 4

// claims is a verified token's payload, read strictly.
type claims struct {
	issuer   string
	audience []string
	expiry   time.Time
	// notBefore is zero when the token has no nbf.
	notBefore time.Time
	tenant    string
	jti       string
	// execSubject is the exec claim's sub, empty without one.
	execSubject string
	// levels is the chain: the subject first, then its actors outermost
	// first.
	levels []level
}

// level is one level of the chain and the authority its garm claim gives.
type level struct {
	subject      string
	kind         toolv1.PrincipalKind
	unknownKind  string
	clearance    toolv1.Clearance
	compartments []string
	verbs        call.Verbs
	// scoped is true when the level names tool sets; toolSets are they.
	scoped   bool
	toolSets []string
}

// object is a JSON object's members, exactly as spelled.
type object map[string]json.RawMessage

// parseClaims reads a payload. Every claim it reads must have the JSON type
// the spec gives it: a claim present with another type, null included,
// refuses the token. Claims it does not read are ignored.
func parseClaims(payload []byte) (*claims, error) {
	if !utf8.Valid(payload) {
		return nil, errors.New("the payload is not valid UTF-8")
	}
	top, err := asObject(payload)
	if err != nil {
		return nil, errors.New("the payload is not a JSON object")
	}
	c := &claims{}
	if c.issuer, err = requiredString(top, "", "iss"); err != nil {
		return nil, err
	}
	if c.audience, err = audienceClaim(top); err != nil {
		return nil, err
	}
	raw, ok := top["exp"]
	if !ok {
		return nil, errors.New("claim exp is missing")
	}
	if c.expiry, err = numericDate(raw); err != nil {
		return nil, fmt.Errorf("claim exp: %w", err)
	}
	if raw, ok := top["nbf"]; ok {
		if c.notBefore, err = numericDate(raw); err != nil {
			return nil, fmt.Errorf("claim nbf: %w", err)
		}
	}
	if c.tenant, err = optionalString(top, "", "tenant"); err != nil {
		return nil, err
	}
	if c.jti, err = optionalString(top, "", "jti"); err != nil {
		return nil, err
	}
	if raw, ok := top["exec"]; ok {
		if c.execSubject, err = execClaim(raw); err != nil {
			return nil, err
		}
	}
	if c.levels, err = chain(top); err != nil {
		return nil, err
	}
	return c, nil
}

// chain reads the subject's level and every act level below it.
func chain(top object) ([]level, error) {
	levels := make([]level, 0, MaxDepth)
	at := top
	for {
		l, err := parseLevel(at, len(levels))
		if err != nil {
			return nil, err
		}
		levels = append(levels, l)
		raw, ok := at["act"]
		if !ok {
			return levels, nil
		}
		if len(levels) == MaxDepth {
			return nil, fmt.Errorf("the act chain is deeper than %d levels", MaxDepth)
		}
		next, err := asObject(raw)
		if err != nil {
			return nil, fmt.Errorf("claim act: act level %d is not an object", len(levels))
		}
		if _, ok := next["exec"]; ok {
			return nil, fmt.Errorf("act level %d: claim exec is top level only", len(levels))
		}
		at = next
	}
}

// parseLevel reads sub and garm of one level; depth 0 is the subject.
func parseLevel(o object, depth int) (level, error) {
	var l level
	sub, err := requiredString(o, "", "sub")
	if err != nil {
		return l, atLevel(depth, err)
	}
	if sub == "" {
		return l, atLevel(depth, errors.New("claim sub is empty"))
	}
	l.subject = sub
	raw, ok := o["garm"]
	if !ok {
		return l, atLevel(depth, errors.New("claim garm is missing"))
	}
	g, err := asObject(raw)
	if err != nil {
		return l, atLevel(depth, errors.New("claim garm is not an object"))
	}
	clearance, err := requiredString(g, "garm.", "clearance")
	if err != nil {
		return l, atLevel(depth, err)
	}
	if l.clearance, ok = parseClearance(clearance); !ok {
		return l, atLevel(depth, errors.New("claim garm.clearance is not a known, specified clearance"))
	}
	if l.compartments, _, err = stringList(g, "garm.", "compartments"); err != nil {
		return l, atLevel(depth, err)
	}
	verbs, _, err := stringList(g, "garm.", "verbs")
	if err != nil {
		return l, atLevel(depth, err)
	}
	for _, v := range verbs {
		l.verbs |= parseVerb(v)
	}
	if l.toolSets, l.scoped, err = stringList(g, "garm.", "tool_sets"); err != nil {
		return l, atLevel(depth, err)
	}
	kind, err := optionalString(g, "garm.", "kind")
	if err != nil {
		return l, atLevel(depth, err)
	}
	if kind != "" {
		if l.kind, ok = parseKind(kind); !ok {
			l.unknownKind = clip(kind)
		}
	}
	return l, nil
}

func atLevel(depth int, err error) error {
	if depth == 0 {
		return err
	}
	return fmt.Errorf("act level %d: %w", depth, err)
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

// requiredString is the string member name of o; path prefixes the name
// in errors ("garm.", "exec.").
func requiredString(o object, path, name string) (string, error) {
	raw, ok := o[name]
	if !ok {
		return "", fmt.Errorf("claim %s%s is missing", path, name)
	}
	return stringValue(raw, path+name)
}

// optionalString is like requiredString, but absent is "".
func optionalString(o object, path, name string) (string, error) {
	raw, ok := o[name]
	if !ok {
		return "", nil
	}
	return stringValue(raw, path+name)
}

func stringValue(raw json.RawMessage, name string) (string, error) {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", fmt.Errorf("claim %s is not a string", name)
	}
	return s, nil
}

// stringList is an optional array of strings and whether it was present.
func stringList(o object, path, name string) ([]string, bool, error) {
	raw, ok := o[name]
	if !ok {
		return nil, false, nil
	}
	var items []json.RawMessage
	if len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &items) != nil {
		return nil, true, fmt.Errorf("claim %s%s is not an array of strings", path, name)
	}
	out := make([]string, len(items))
	for i, item := range items {
		s, err := stringValue(item, name)
		if err != nil {
			return nil, true, fmt.Errorf("claim %s%s is not an array of strings", path, name)
		}
		out[i] = s
	}
	return out, true, nil
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
	aud, _, err := stringList(o, "", "aud")
	if err != nil {
		return nil, errors.New("claim aud is neither a string nor an array of strings")
	}
	return aud, nil
}

// maxNumericDate is the last second of year 9999: later dates are refused
// rather than overflowed.
const maxNumericDate = 253402300799

// numericDate is a JWT NumericDate: seconds since the epoch, a JSON number,
// possibly fractional, never negative.
func numericDate(raw json.RawMessage) (time.Time, error) {
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return time.Time{}, errors.New("not a number")
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsNaN(f) || f < 0 || f > maxNumericDate {
		return time.Time{}, errors.New("not a date")
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)).UTC(), nil
}

// execClaim is the sub of a top-level exec claim: an object with a
// non-empty string sub and, optionally, a string iss.
func execClaim(raw json.RawMessage) (string, error) {
	o, err := asObject(raw)
	if err != nil {
		return "", errors.New("claim exec is not an object")
	}
	sub, err := requiredString(o, "exec.", "sub")
	if err != nil {
		return "", err
	}
	if sub == "" {
		return "", errors.New("claim exec.sub is empty")
	}
	if _, err := optionalString(o, "exec.", "iss"); err != nil {
		return "", err
	}
	return sub, nil
}

// parseClearance reads a clearance, bare or CLEARANCE_-prefixed, in any
// ASCII case; unspecified is not a clearance.
func parseClearance(s string) (toolv1.Clearance, bool) {
	n, ok := enumValue(s, "CLEARANCE_", toolv1.Clearance_value)
	if !ok || n == int32(toolv1.Clearance_CLEARANCE_UNSPECIFIED) {
		return 0, false
	}
	return toolv1.Clearance(n), true
}

// parseVerb reads a verb, bare or VERB_-prefixed, in any ASCII case; an
// unknown verb is the empty set.
func parseVerb(s string) call.Verbs {
	n, ok := enumValue(s, "VERB_", toolv1.Verb_value)
	if !ok {
		return 0
	}
	return call.VerbsOf(toolv1.Verb(n))
}

// parseKind reads a principal kind, bare or PRINCIPAL_KIND_-prefixed, in
// any ASCII case.
func parseKind(s string) (toolv1.PrincipalKind, bool) {
	n, ok := enumValue(s, "PRINCIPAL_KIND_", toolv1.PrincipalKind_value)
	return toolv1.PrincipalKind(n), ok
}

// enumValue looks s up in an enum's value map, upper-casing ASCII letters
// and adding prefix when s lacks it. Anything outside ASCII is unknown, so
// that no Unicode case mapping can make two spellings of one name.
func enumValue(s, prefix string, values map[string]int32) (int32, bool) {
	const longest = 32
	if len(s) == 0 || len(s) > longest {
		return 0, false
	}
	var buf [64]byte
	up := buf[:0]
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
	if len(name) < len(prefix) || name[:len(prefix)] != prefix {
		name = prefix + name
	}
	n, ok := values[name]
	return n, ok
}

// clip bounds a token-supplied string before it is put in a refusal's
// detail or a log line.
func clip(s string) string {
	const max = 64
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}
