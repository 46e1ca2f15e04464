package grant

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/deny"
	"github.com/garm-dev/garm/daemon/internal/keyset"
	"github.com/garm-dev/garm/daemon/internal/replay"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/runtime/wire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Limits and defaults of step 5 (design 7.5, 7.9).
const (
	// MaxGrantBytes is the largest grant read; a larger one is refused
	// before it is parsed.
	MaxGrantBytes = 16 << 10
	// DefaultSkew is the clock skew allowed on exp, nbf and iat, the same
	// as a token's.
	DefaultSkew = 60 * time.Second
	// MaxTaskBytes bounds the task id recorded from a grant.
	MaxTaskBytes = 128
)

// Config is what a Verifier needs. Issuer, JWKSURL, Audience and Spender are
// required; every other field has a default.
type Config struct {
	// Issuer is the exact iss of every grant (--grant-issuer).
	Issuer string
	// JWKSURL is where the issuer publishes its keys (--grant-jwks).
	JWKSURL string
	// Audience is the aud a grant must name (--grant-audience).
	Audience string
	// Spender records spent grants, across every replica.
	Spender replay.Spender
	// Skew is allowed on exp, nbf and iat; zero means DefaultSkew.
	Skew time.Duration
	// Client fetches the key set; default http.DefaultClient.
	Client *http.Client
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Logger receives key set failures; default discards.
	Logger *slog.Logger
}

// Verifier is chain step 5: it checks and spends the approval grant a call
// to a MODE_GRANT tool presents. It is safe for concurrent use.
type Verifier struct {
	issuer   string
	audience string
	keys     *keyset.Set
	spender  replay.Spender
	skew     time.Duration
	now      func() time.Time
}

// New is a Verifier for cfg, or a *deny.Misconfigured naming every problem
// with it.
func New(cfg Config) (*Verifier, error) {
	var problems []string
	if cfg.Issuer == "" {
		problems = append(problems, "grant: no grant issuer is configured")
	}
	if u, err := url.Parse(cfg.JWKSURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		problems = append(problems, fmt.Sprintf("grant: JWKS URL %q is not an http(s) URL", cfg.JWKSURL))
	}
	if cfg.Audience == "" {
		problems = append(problems, "grant: no grant audience is configured")
	}
	if cfg.Spender == nil {
		problems = append(problems, "grant: no spender is configured, so no grant could be spent")
	}
	if cfg.Skew < 0 {
		problems = append(problems, fmt.Sprintf("grant: skew %s is negative", cfg.Skew))
	}
	if len(problems) > 0 {
		return nil, &deny.Misconfigured{Problems: problems}
	}
	v := &Verifier{
		issuer:   cfg.Issuer,
		audience: cfg.Audience,
		spender:  cfg.Spender,
		skew:     cfg.Skew,
		now:      cfg.Now,
	}
	if v.skew == 0 {
		v.skew = DefaultSkew
	}
	if v.now == nil {
		v.now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	v.keys = keyset.NewSet(cfg.JWKSURL, keyset.Options{Client: cfg.Client, Now: v.now, Logger: log})
	return v, nil
}

// KeySetStats are the stats of the grant issuer's key set, for metrics.
func (v *Verifier) KeySetStats() keyset.Stats { return v.keys.Stats() }

// Skew is the clock skew the verifier allows.
func (v *Verifier) Skew() time.Duration { return v.skew }

// Horizon is how long after it is spent a grant could still be presented to
// one of tools: the longest max_grant_age_seconds of the MODE_GRANT tools,
// plus the verifier's skew. The spent-grant bucket must keep a key at least
// this long.
func (v *Verifier) Horizon(tools []*call.Tool) time.Duration { return Horizon(tools, v.skew) }

// Horizon is Verifier.Horizon for a given skew: 0 when no tool declares
// MODE_GRANT.
func Horizon(tools []*call.Tool, skew time.Duration) time.Duration {
	var longest uint32
	found := false
	for _, t := range tools {
		if a := t.Policy.GetApproval(); a.GetMode() == toolv1.ToolPolicy_Approval_MODE_GRANT {
			longest, found = max(longest, a.GetMaxGrantAgeSeconds()), true
		}
	}
	if !found {
		return 0
	}
	return time.Duration(longest)*time.Second + skew
}

// Result is what the chain records whatever the verdict.
type Result struct {
	// JTI is the grant's id, set only when the grant verified for this
	// call; Spend spends it.
	JTI string
	// TaskID is the grant's garm_grant.task, clipped to MaxTaskBytes,
	// whenever the payload can be read — from the unverified payload when
	// the grant did not verify — so that a refused attempt is attributed
	// to its task too. It is never a reason to trust anything.
	TaskID string
	// key is the grant's key in the spent-grant bucket.
	key string
}

// Check is step 5's verification for t, a tool declaring MODE_GRANT: grant
// is the Garm-Grant header ("" when absent), p the caller, req the decoded
// request. It refuses an absent grant with deny.GrantRequired, saying what
// a grant must bind, and anything else wrong with deny.PermissionDenied,
// detailed for the ledger. It spends nothing: a grant that verified is
// spent by Spend, which the chain calls as its last act before dispatch,
// once everything else about the call has been decided.
func (v *Verifier) Check(ctx context.Context, grant string, p *call.Principal, t *call.Tool, req protoreflect.Message) (Result, error) {
	if p == nil || t == nil {
		return Result{}, deny.Fail(deny.Internal, "internal", "grant: step 5 was given no caller or no tool")
	}
	approval := t.Policy.GetApproval()
	if approval.GetMode() != toolv1.ToolPolicy_Approval_MODE_GRANT {
		return Result{}, deny.Fail(deny.Internal, "internal", "grant: step 5 was asked about tool "+t.FQN+", which does not declare MODE_GRANT")
	}
	if grant == "" {
		return Result{}, grantRequired(t, approval)
	}
	if len(grant) > MaxGrantBytes {
		return Result{}, refuse("the grant is larger than %d bytes", MaxGrantBytes)
	}

	var res Result
	payload, _, err := v.keys.Verify(ctx, []byte(grant))
	if err != nil {
		res.TaskID = unverifiedTask(grant)
		return res, refuse("the grant does not verify: %v", err)
	}
	c, err := parseClaims(payload)
	res.TaskID = c.task
	if err != nil {
		return res, refuse("%v", err)
	}
	if err := v.checkClaims(c, p, t, approval, req); err != nil {
		return res, err
	}
	res.JTI, res.key = c.jti, replay.Key(v.issuer, c.jti)
	return res, nil
}

// Spend spends the grant res verified for the call callID (its event id),
// once across every replica, within ctx. It refuses with
// deny.PermissionDenied a grant spent before and one whose spending cannot
// be proved (fail closed), and a res that did not verify.
func (v *Verifier) Spend(ctx context.Context, res Result, callID string) error {
	if res.JTI == "" || res.key == "" {
		return deny.Fail(deny.Internal, "internal", "grant: asked to spend a grant that did not verify")
	}
	switch err := v.spender.Spend(ctx, res.key, callID); {
	case errors.Is(err, replay.ErrSpent):
		return refuseJTI(res.JTI, "was already spent")
	case err != nil:
		return refuseJTI(res.JTI, "could not be spent: the spent-grant bucket could not be written (%v)", err)
	}
	return nil
}

// Spent reports whether the verified grant res was already spent. A grant
// recalled from its approval request may have been presented and spent by
// an earlier call; that call's approval is used, and this call asks anew
// (decision 0113). Only Spend proves a spend: false here promises nothing.
func (v *Verifier) Spent(ctx context.Context, res Result) (bool, error) {
	if res.key == "" {
		return false, errors.New("grant: asked whether a grant that did not verify was spent")
	}
	return v.spender.Spent(ctx, res.key)
}

// checkClaims is every check of design 7.9 but the spend, cheapest first.
func (v *Verifier) checkClaims(c *claims, p *call.Principal, t *call.Tool, approval *toolv1.ToolPolicy_Approval, req protoreflect.Message) error {
	if c.issuer != v.issuer {
		return refuse("the verified iss %q is not the grant issuer", clip(c.issuer))
	}
	if !slices.Contains(c.audience, v.audience) {
		return refuse("the grant's aud does not name the grant audience")
	}
	if c.jti == "" {
		return refuse("the grant has no jti")
	}
	g := c.grant
	now := v.now()
	switch {
	case c.hasAct:
		return refuseJTI(c.jti, "carries an act claim: a delegated identity cannot approve")
	case !now.Before(c.expiry.Add(v.skew)):
		return refuseJTI(c.jti, "expired at %s", c.expiry.Format(time.RFC3339))
	case !c.notBefore.IsZero() && now.Before(c.notBefore.Add(-v.skew)):
		return refuseJTI(c.jti, "is not valid before %s", c.notBefore.Format(time.RFC3339))
	case c.issuedAt.After(now.Add(v.skew)):
		return refuseJTI(c.jti, "was issued in the future (%s)", c.issuedAt.Format(time.RFC3339))
	case approval.GetMaxGrantAgeSeconds() == 0:
		return refuseJTI(c.jti, "cannot be accepted: the tool declares no max_grant_age_seconds, so every grant is too old")
	case now.Sub(c.issuedAt) > time.Duration(approval.GetMaxGrantAgeSeconds())*time.Second:
		return refuseJTI(c.jti, "was issued at %s, more than the tool's %d seconds ago", c.issuedAt.Format(time.RFC3339), approval.GetMaxGrantAgeSeconds())
	case g.tool != t.FQN:
		return refuseJTI(c.jti, "approves another tool")
	case g.subject != p.Subject:
		return refuseJTI(c.jti, "approves a call by another subject")
	case g.hasTenant && g.tenant != p.Tenant:
		return refuseJTI(c.jti, "approves a call in another tenant")
	case g.hasAct && !sameChain(g.act, p.Act):
		return refuseJTI(c.jti, "approves a call through another delegation chain")
	case !call.Allows(g.clearance, approval.GetApproverMinClearance()):
		return refuseJTI(c.jti, "was approved at clearance %s, below the tool's approver_min_clearance %s", g.clearance, approval.GetApproverMinClearance())
	}
	if approval.GetDistinctApprover() {
		if err := fourEyes(c, p); err != nil {
			return err
		}
	}
	for _, need := range approval.GetApproverCompartments() {
		if !slices.Contains(g.compartments, need) {
			return refuseJTI(c.jti, "was approved by an approver without compartment %q", need)
		}
	}
	if fields := approval.GetMaterialFields(); len(fields) > 0 {
		if !g.hasMaterial {
			return refuseJTI(c.jti, "has no garm_grant.material and the tool declares material_fields")
		}
		want, err := wire.RequestMaterialDigest(req, fields)
		if err != nil {
			return refuseJTI(c.jti, "cannot be checked: the request's material digest cannot be computed (%v)", err)
		}
		if g.material != want {
			return refuseJTI(c.jti, "approves other material than the request's")
		}
	}
	return nil
}

// fourEyes is distinct_approver: the approver must be a person other than
// every party to the call — its subject and each actor it was delegated
// through. Subjects are compared exactly, as the token and the grant spell
// them.
func fourEyes(c *claims, p *call.Principal) error {
	if c.grant.approver == p.Subject {
		return refuseJTI(c.jti, "was approved by the call's own subject, and the tool declares distinct_approver")
	}
	for i, a := range p.Act {
		if c.grant.approver == a.Subject {
			return refuseJTI(c.jti, "was approved by actor %d of the call's delegation chain, and the tool declares distinct_approver", i+1)
		}
	}
	return nil
}

// sameChain reports whether the grant's act lists exactly the call's
// actors, outermost first.
func sameChain(act []string, chain []call.Actor) bool {
	return slices.EqualFunc(act, chain, func(s string, a call.Actor) bool { return s == a.Subject })
}

// grantRequired is the refusal of a call that presented no grant: the
// caller learns what a grant for this tool must bind, so it can ask for one.
func grantRequired(t *call.Tool, approval *toolv1.ToolPolicy_Approval) *deny.Denied {
	return &deny.Denied{
		Code:   deny.GrantRequired,
		Detail: "tool " + t.FQN + " declares MODE_GRANT and no Garm-Grant was presented",
		Extra: map[string]any{
			"tool": t.FQN,
			// Never null on the wire (design 7.3), and never the catalogue's
			// own slice.
			"material_fields":       append([]string{}, approval.GetMaterialFields()...),
			"max_grant_age_seconds": approval.GetMaxGrantAgeSeconds(),
			// So the caller asks somebody other than itself and its agents.
			"distinct_approver": approval.GetDistinctApprover(),
		},
	}
}

func refuse(format string, args ...any) *deny.Denied {
	return deny.Deny(deny.PermissionDenied, "approval grant: "+fmt.Sprintf(format, args...))
}

// refuseJTI is refuse for a grant whose id is known, naming it.
func refuseJTI(jti, format string, args ...any) *deny.Denied {
	return deny.Deny(deny.PermissionDenied, fmt.Sprintf("approval grant %q ", clip(jti))+fmt.Sprintf(format, args...))
}
