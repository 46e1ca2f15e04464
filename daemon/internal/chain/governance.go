package chain

import (
	"context"
	"errors"
	"time"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/chain/grant"
	"github.com/garm-dev/garm/daemon/internal/deny"
	"github.com/garm-dev/garm/daemon/internal/tracing"
	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// The governance a tool declares beyond its gate: an approval grant before
// the call (step 5), a write-ahead and an outcome on the audit stream
// around it, a human told after it (step 10). The mount allowlist
// guarantees that whatever a served tool declares here has its enforcer
// configured; each step still fails closed if it does not.

func needsGrant(t *call.Tool) bool {
	return t.Policy.GetApproval().GetMode() == toolv1.ToolPolicy_Approval_MODE_GRANT
}

func notifies(t *call.Tool) bool {
	return t.Policy.GetApproval().GetMode() == toolv1.ToolPolicy_Approval_MODE_NOTIFY
}

func audited(t *call.Tool) bool {
	return t.Policy.GetAudit().GetLevel() == toolv1.ToolPolicy_Audit_LEVEL_AUDIT
}

// approve is step 5's verification for a MODE_GRANT tool: the verified,
// unspent grant (zero for a tool that needs none), or the refusal. The grant
// is the one the caller presented (Garm-Grant), or the one a human's
// decision carries on the caller's approval request (Garm-Approval); either
// is checked the same. A call that presented neither leaves a request for a
// human when approvals are on. The grant's task, whatever the verdict, is
// the row's task_id tag. Everything here is bounded by the call's deadline.
func (c *Chain) approve(ctx context.Context, req *Request, p *call.Principal, t *call.Tool, in protoreflect.Message, st *state, deadline time.Time) (grant.Result, error) {
	if !needsGrant(t) {
		return grant.Result{}, nil
	}
	if c.Grants == nil {
		return grant.Result{}, deny.Fail(deny.Internal, "grant", "tool "+t.FQN+" declares MODE_GRANT and approval grants are off")
	}
	if req.Grant != "" && req.Approval != "" {
		// Surfaces refuse this before the chain; a new one that did not
		// still gets no choice made for it.
		return grant.Result{}, deny.Deny(deny.MalformedHeaders, "a grant and an approval id were both presented")
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	ctx, span := c.Tracer.StartStep(ctx, tracing.StepVerifyGrant)
	presented := req.Grant
	if req.Approval != "" {
		g, err := c.redeem(ctx, req, p, t, in, st)
		if err != nil {
			tracing.EndStep(span, err)
			return grant.Result{}, err
		}
		presented = g
	}
	res, err := c.Grants.Check(ctx, presented, p, t, in)
	if d := (*deny.Denied)(nil); errors.As(err, &d) && d.Code == deny.GrantRequired && c.Approvals != nil {
		res, err = c.ask(ctx, d, p, t, in, st)
	}
	tracing.EndStep(span, err)
	if res.TaskID != "" {
		tag(st.row, "task_id", res.TaskID)
	}
	return res, err
}

func tag(row *ledgerv1.Event, key, value string) {
	if row.Tags == nil {
		row.Tags = map[string]string{}
	}
	row.Tags[key] = value
}

// spend is step 5's last act, the last before dispatch: the verified grant
// of a MODE_GRANT tool is spent by the call callID, once across every
// replica, within ctx (the call's deadline).
func (c *Chain) spend(ctx context.Context, t *call.Tool, approval grant.Result, callID string) error {
	if !needsGrant(t) {
		return nil
	}
	if c.Grants == nil {
		return deny.Fail(deny.Internal, "grant", "tool "+t.FQN+" declares MODE_GRANT and approval grants are off")
	}
	ctx, span := c.Tracer.StartStep(ctx, tracing.StepSpendGrant)
	err := c.Grants.Spend(ctx, approval, callID)
	tracing.EndStep(span, err)
	return err
}

// writeAhead writes the intent row of a LEVEL_AUDIT tool's call before it
// is dispatched, within ctx (the call's deadline). A fail_closed tool whose intent cannot be written is not
// called (503); any other tool is called, and the failure logged.
func (c *Chain) writeAhead(ctx context.Context, t *call.Tool, row *ledgerv1.Event) error {
	if !audited(t) {
		return nil
	}
	failClosed := t.Policy.GetAudit().GetFailClosed()
	if c.Audit == nil {
		if failClosed {
			return deny.Fail(deny.AuditUnavailable, "audit_unavailable", "tool "+t.FQN+" is audited fail_closed and no audit sink is configured")
		}
		return nil
	}
	intent := proto.Clone(row).(*ledgerv1.Event)
	intent.Outcome = "intent"
	wctx, span := c.Tracer.StartStep(ctx, tracing.StepWriteAhead)
	err := c.Audit.Write(wctx, intent)
	tracing.EndStep(span, err)
	if err != nil {
		if failClosed {
			return deny.Fail(deny.AuditUnavailable, "audit_unavailable", "the audit intent was not written: "+err.Error())
		}
		c.Logger.ErrorContext(ctx, "garmd: an audit intent was not written; the call goes on (not fail_closed)", "event_id", row.GetEventId(), "tool", t.FQN, "err", err)
	}
	return nil
}

// afterLedger runs once the row is recorded: the audit outcome row of a
// LEVEL_AUDIT tool the caller reached (an outcome without an intent says
// the call was refused before the tool), then step 10 for a MODE_NOTIFY
// tool that was called. Neither changes the answer.
func (c *Chain) afterLedger(ctx context.Context, st *state) {
	t := st.tool
	if t == nil {
		return
	}
	if audited(t) && c.Audit != nil {
		if err := c.Audit.Write(context.WithoutCancel(ctx), st.row); err != nil {
			c.Logger.ErrorContext(ctx, "garmd: an audit outcome was not written", "event_id", st.row.GetEventId(), "tool", t.FQN, "outcome", st.row.GetOutcome(), "err", err)
		}
	}
	if st.dispatched && notifies(t) && c.Notify != nil {
		c.Notify.Notify(st.row)
	}
}
