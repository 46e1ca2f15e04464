package authn

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/jwtclaims"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

// MaxDepth is the most levels a token's chain may have: the subject and its
// actors (design 7.5).
const MaxDepth = 4

// claims is a verified token's payload, read strictly.
type claims struct {
	issuer   string
	audience []string
	expiry   time.Time
	// notBefore is zero when the token has no nbf.
	notBefore time.Time
	// issuedAt is zero when the token has no iat.
	issuedAt time.Time
	tenant   string
	jti      string
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
	// attrs are the members of garm.attrs, unread until the fold judges
	// them against the generation's declarations; nil without the claim.
	attrs object
}

// object is a JSON object's members, exactly as spelled.
type object = jwtclaims.Object

// parseClaims reads a payload. Every claim it reads must have the JSON type
// the spec gives it: a claim present with another type, null included,
// refuses the token. Claims it does not read are ignored.
func parseClaims(payload []byte) (*claims, error) {
	if !utf8.Valid(payload) {
		return nil, errors.New("the payload is not valid UTF-8")
	}
	top, err := jwtclaims.AsObject(payload)
	if err != nil {
		return nil, errors.New("the payload is not a JSON object")
	}
	c := &claims{}
	if c.issuer, err = requiredString(top, "", "iss"); err != nil {
		return nil, err
	}
	if c.audience, err = jwtclaims.Audience(top); err != nil {
		return nil, err
	}
	raw, ok := top["exp"]
	if !ok {
		return nil, errors.New("claim exp is missing")
	}
	if c.expiry, err = jwtclaims.NumericDate(raw); err != nil {
		return nil, fmt.Errorf("claim exp: %w", err)
	}
	if raw, ok := top["nbf"]; ok {
		if c.notBefore, err = jwtclaims.NumericDate(raw); err != nil {
			return nil, fmt.Errorf("claim nbf: %w", err)
		}
	}
	if raw, ok := top["iat"]; ok {
		if c.issuedAt, err = jwtclaims.NumericDate(raw); err != nil {
			return nil, fmt.Errorf("claim iat: %w", err)
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
		next, err := jwtclaims.AsObject(raw)
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
	g, err := jwtclaims.AsObject(raw)
	if err != nil {
		return l, atLevel(depth, errors.New("claim garm is not an object"))
	}
	clearance, err := requiredString(g, "garm.", "clearance")
	if err != nil {
		return l, atLevel(depth, err)
	}
	if l.clearance, ok = jwtclaims.Clearance(clearance); !ok {
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
	if raw, ok := g["attrs"]; ok {
		if l.attrs, err = jwtclaims.AsObject(raw); err != nil {
			return l, atLevel(depth, errors.New("claim garm.attrs is not an object"))
		}
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

// requiredString is the string member name of o; path prefixes the name
// in errors ("garm.", "exec.").
func requiredString(o object, path, name string) (string, error) {
	raw, ok := o[name]
	if !ok {
		return "", fmt.Errorf("claim %s%s is missing", path, name)
	}
	return jwtclaims.String(raw, path+name)
}

// optionalString is like requiredString, but absent is "".
func optionalString(o object, path, name string) (string, error) {
	raw, ok := o[name]
	if !ok {
		return "", nil
	}
	return jwtclaims.String(raw, path+name)
}

// stringList is an optional array of strings and whether it was present.
func stringList(o object, path, name string) ([]string, bool, error) {
	raw, ok := o[name]
	if !ok {
		return nil, false, nil
	}
	items, err := jwtclaims.List(raw, path+name)
	return items, true, err
}

// execClaim is the sub of a top-level exec claim: an object with a
// non-empty string sub and, optionally, a string iss.
func execClaim(raw json.RawMessage) (string, error) {
	o, err := jwtclaims.AsObject(raw)
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

// parseVerb reads a verb, bare or VERB_-prefixed, in any ASCII case; an
// unknown verb is the empty set.
func parseVerb(s string) call.Verbs {
	n, ok := jwtclaims.EnumValue(s, "VERB_", toolv1.Verb_value)
	if !ok {
		return 0
	}
	return call.VerbsOf(toolv1.Verb(n))
}

// parseKind reads a principal kind, bare or PRINCIPAL_KIND_-prefixed, in
// any ASCII case.
func parseKind(s string) (toolv1.PrincipalKind, bool) {
	n, ok := jwtclaims.EnumValue(s, "PRINCIPAL_KIND_", toolv1.PrincipalKind_value)
	return toolv1.PrincipalKind(n), ok
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
