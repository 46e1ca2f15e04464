package approvals

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/garm-dev/garm/approvals/grant"
	"github.com/garm-dev/garm/approvals/pending"
	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/runtime/wire"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Requests is the port to the pending requests: [pending.Store] implements it.
type Requests interface {
	// Get answers a request and its decision (nil when undecided); pending.ErrNotFound when it is
	// missing, expired, or its id is not one pending could have made.
	Get(ctx context.Context, id string) (pending.Request, *pending.Decision, error)
	// Decide records a decision once: pending.ErrDecided when one exists.
	Decide(ctx context.Context, d pending.Decision) error
	// Inbox answers a page of tenant's undecided, unexpired requests that keep accepts, oldest
	// first, after position after, at most limit, and where the next page begins.
	Inbox(ctx context.Context, tenant, after string, limit int, keep func(pending.Request) bool) (pending.InboxPage, error)
}

var _ Requests = (*pending.Store)(nil)

// Auditor is the port to the audit stream: Write returns once the row is acknowledged, or with
// why it was not. [NewAuditStream] implements it on GARM_AUDIT.
type Auditor interface {
	Write(ctx context.Context, e *ledgerv1.Event) error
}

// AuditApp is the app every audit row of the service names: its rows are on
// wire.AuditSubject(tenant, AuditApp), the one audit subject its bus identity may publish to
// (natsperm.ApprovalsAuditApp, which must be the same).
const AuditApp = "approvals"

// MayDecide reports whether a may decide r: the same tenant; a clearance at least the tool's
// approver_min_clearance (by [wire.ClearanceAllows], garmd's rule); every approver compartment;
// and, when the tool declares distinct_approver, neither the call's subject nor any actor of its
// delegation chain. It is exactly what garmd's step 5 would accept a grant from, so the inbox
// never offers a decision whose grant garmd would refuse, plus the tenant, which garmd leaves to
// the issuer.
func MayDecide(a Approver, r pending.Request) bool {
	if !cleared(a, r.Tenant, r.ApproverMinClearance, r.ApproverCompartments) {
		return false
	}
	if r.DistinctApprover && (a.Subject == r.Subject || slices.Contains(r.Act, a.Subject)) {
		return false
	}
	return true
}

// Errors a decision can end with besides the store's.
var (
	// errNotDecidable: the request is missing, expired, or not for this approver. Answered as a
	// missing request.
	errNotDecidable = errors.New("approvals: no such request for this approver")
	// errAlreadyDecided: the request has a decision.
	errAlreadyDecided = errors.New("approvals: the request is already decided")
	// errNotRecorded: the audit row or the decision could not be written; nothing was decided.
	errNotRecorded = errors.New("approvals: the decision could not be recorded")
)

// decide records a's verdict on request id. It judges again, at decision time, whether a may
// decide it; approving mints the grant over the request's material digest. The audit row is
// written first and the decision stored only once the stream acknowledged it, so a decision
// never exists without its row (decision 0058); a row whose decision then could not be stored is
// followed by a row saying so.
func (s *Service) decide(ctx context.Context, a Approver, id string, verdict pending.Verdict) (pending.Decision, pending.Request, error) {
	if !pending.ValidID(id) {
		return pending.Decision{}, pending.Request{}, errNotDecidable
	}
	r, d, err := s.requests.Get(ctx, id)
	switch {
	case errors.Is(err, pending.ErrNotFound):
		return pending.Decision{}, r, errNotDecidable
	case err != nil:
		return pending.Decision{}, r, fmt.Errorf("%w: read the request: %v", errNotRecorded, err)
	}
	now := s.cfg.Now()
	if !MayDecide(a, r) || !now.Before(r.Expires) {
		return pending.Decision{}, r, errNotDecidable
	}
	if d != nil {
		return *d, r, errAlreadyDecided
	}
	dec := pending.Decision{ID: r.ID, Verdict: verdict, Approver: a.Subject, Decided: now.UTC()}
	if verdict == pending.Approved {
		if dec.Grant, err = s.mintGrant(a, r, now); err != nil {
			return pending.Decision{}, r, fmt.Errorf("%w: sign the grant: %v", errNotRecorded, err)
		}
	}
	row := auditRow(a, r, dec)
	if err := s.audit.Write(ctx, row); err != nil {
		return pending.Decision{}, r, fmt.Errorf("%w: the audit row: %v", errNotRecorded, err)
	}
	err = s.requests.Decide(ctx, dec)
	if err == nil {
		return dec, r, nil
	}
	failed := auditRow(a, r, dec)
	failed.EventId = randomToken()
	failed.Outcome, failed.ErrorKind = "error", "decision_not_stored"
	failed.CausationId = row.GetEventId()
	failed.ErrorDetail = "the decision audited as event " + row.GetEventId() + " was not stored: " + err.Error()
	if werr := s.audit.Write(context.WithoutCancel(ctx), failed); werr != nil {
		s.log.Error("approvals: the row saying a decision was not stored was not written", "request", r.ID, "err", werr)
	}
	switch {
	case errors.Is(err, pending.ErrDecided):
		return pending.Decision{}, r, errAlreadyDecided
	case errors.Is(err, pending.ErrNotFound):
		return pending.Decision{}, r, errNotDecidable
	default:
		return pending.Decision{}, r, fmt.Errorf("%w: store the decision: %v", errNotRecorded, err)
	}
}

// mintGrant signs the grant for r approved by a: exactly r's tool, subject, tenant, act chain and
// material digest,
// living the tool's max grant age (or the configured cap, if shorter).
func (s *Service) mintGrant(a Approver, r pending.Request, now time.Time) (string, error) {
	ttl := time.Duration(r.MaxGrantAgeSeconds) * time.Second
	if s.cfg.GrantTTL > 0 && s.cfg.GrantTTL < ttl {
		ttl = s.cfg.GrantTTL
	}
	if ttl <= 0 {
		return "", errors.New("the tool declares no max_grant_age_seconds, so garmd accepts no grant for it")
	}
	clearance, _ := wire.ParseClearance(a.Clearance) // MayDecide checked it
	claims := grant.NewClaims(s.cfg.GrantIssuer, s.cfg.GrantAudience, now, ttl,
		grant.Approval{Tool: r.Tool, Subject: r.Subject, Tenant: r.Tenant, Act: append([]string{}, r.Act...), MaterialDigest: r.MaterialDigest},
		grant.Approver{Subject: a.Subject, Clearance: clearance.String(), Compartments: a.Compartments})
	return s.signer.sign(claims)
}

// auditRow is the audit row of a decision: who decided (principal), what (tool, the request id
// as correlation id, the refused call's event id as causation id), when, and the verdict as the
// outcome. It carries neither the grant nor the material's values.
func auditRow(a Approver, r pending.Request, d pending.Decision) *ledgerv1.Event {
	clearance, _ := wire.ParseClearance(a.Clearance)
	return &ledgerv1.Event{
		EventId:               randomToken(),
		Time:                  timestamppb.New(d.Decided),
		Tenant:                r.Tenant,
		App:                   AuditApp,
		CorrelationId:         r.ID,
		CausationId:           r.EventID,
		Outcome:               string(d.Verdict),
		Tool:                  r.Tool,
		PrincipalSubject:      a.Subject,
		PrincipalKind:         toolv1.PrincipalKind_PRINCIPAL_KIND_USER.String(),
		ClearanceEffective:    clearance.String(),
		CompartmentsEffective: slices.Clone(a.Compartments),
		Surface:               "approvals",
		Tags: map[string]string{
			"approval_request": r.ID,
			"requester":        r.Subject,
			"material_digest":  r.MaterialDigest,
		},
	}
}

// cleared reports whether a, signed in, is of tenant, holds at least clearance (a
// garm.tool.v1.Clearance name; one that does not parse clears nobody) and every one of
// compartments: the judgement the inbox ([MayDecide]) and the feed ([MayWatch]) share.
func cleared(a Approver, tenant, clearance string, compartments []string) bool {
	if a.Subject == "" || a.Tenant != tenant {
		return false
	}
	have, ok := wire.ParseClearance(a.Clearance)
	if !ok {
		return false
	}
	need, ok := wire.ParseClearance(clearance)
	if !ok || !wire.ClearanceAllows(have, need) {
		return false
	}
	for _, c := range compartments {
		if !slices.Contains(a.Compartments, c) {
			return false
		}
	}
	return true
}
