package grant

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/garm-dev/garm/daemon/internal/jwtclaims"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

// claims is a verified grant's payload, read strictly: every claim read
// must have the JSON type design 7.9 gives it, null included.
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
	// tenant and act are what the grant binds of the caller besides its
	// subject; hasTenant and hasAct say whether it binds them at all.
	tenant    string
	hasTenant bool
	act       []string
	hasAct    bool
}

// object is a JSON object's members, exactly as spelled.
type object = jwtclaims.Object

// parseClaims reads a verified payload. It always returns claims, holding
// at least the task when the payload is an object that names one; the
// error says which claim is missing or malformed.
func parseClaims(payload []byte) (*claims, error) {
	c := &claims{}
	if !utf8.Valid(payload) {
		return c, errors.New("the payload is not valid UTF-8")
	}
	top, err := jwtclaims.AsObject(payload)
	if err != nil {
		return c, errors.New("the payload is not a JSON object")
	}
	c.task = task(top)
	if c.issuer, err = requiredString(top, "iss"); err != nil {
		return c, err
	}
	if c.audience, err = jwtclaims.Audience(top); err != nil {
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
	g, err := jwtclaims.AsObject(raw)
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
	if out.clearance, ok = jwtclaims.Clearance(clearance); !ok {
		return out, errors.New("claim garm_grant.approver_clearance is not a known, specified clearance")
	}
	if out.compartments, err = stringList(g, "garm_grant.approver_compartments"); err != nil {
		return out, err
	}
	if _, out.hasTenant = g["tenant"]; out.hasTenant {
		if out.tenant, err = requiredString(g, "garm_grant.tenant"); err != nil {
			return out, err
		}
	}
	if _, out.hasAct = g["act"]; out.hasAct {
		if out.act, err = stringList(g, "garm_grant.act"); err != nil {
			return out, err
		}
	}
	if _, out.hasMaterial = g["material"]; out.hasMaterial {
		if out.material, err = requiredString(g, "garm_grant.material"); err != nil {
			return out, err
		}
	}
	return out, nil
}

// unverifiedTask is garm_grant.task from a grant that did not verify: it
// is recorded, as design 7.9 asks, and trusted for nothing.
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
	top, err := jwtclaims.AsObject(payload)
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
	g, err := jwtclaims.AsObject(raw)
	if err != nil {
		return ""
	}
	raw, ok = g["task"]
	if !ok {
		return ""
	}
	s, err := jwtclaims.String(raw, "garm_grant.task")
	if err != nil {
		return ""
	}
	return clipUTF8(strings.ToValidUTF8(s, "\uFFFD"), MaxTaskBytes)
}

// requiredString is the string member of o at path's last name; path names
// the claim in errors ("garm_grant.tool").
func requiredString(o object, path string) (string, error) {
	raw, ok := o[lastName(path)]
	if !ok {
		return "", fmt.Errorf("claim %s is missing", path)
	}
	return jwtclaims.String(raw, path)
}

// stringList is an optional array of strings; absent is empty.
func stringList(o object, path string) ([]string, error) {
	raw, ok := o[lastName(path)]
	if !ok {
		return nil, nil
	}
	return jwtclaims.List(raw, path)
}

// requiredDate is a JWT NumericDate member (jwtclaims.NumericDate).
func requiredDate(o object, name string) (time.Time, error) {
	raw, ok := o[name]
	if !ok {
		return time.Time{}, fmt.Errorf("claim %s is missing", name)
	}
	t, err := jwtclaims.NumericDate(raw)
	if err != nil {
		return time.Time{}, fmt.Errorf("claim %s is %w", name, err)
	}
	return t, nil
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
