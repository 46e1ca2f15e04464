package chain

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/garm-dev/garm/approvals/pending"
	"github.com/garm-dev/garm/daemon/internal/approval"
	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/chain/grant"
	rowstep "github.com/garm-dev/garm/daemon/internal/chain/ledger"
	"github.com/garm-dev/garm/daemon/internal/deny"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// ApprovalsPath is the prefix of GET /approvals/<id>, where a caller asks
// where its approval request stands.
const ApprovalsPath = "/approvals/"

// KindApprovalsUnavailable is the row's error_kind of a call that needed
// an approval request when the request bucket did not answer (the bus or
// its quorum away): answered 503 with Retry-After, as a spend that cannot
// be written is, never grant_required without where to ask.
const KindApprovalsUnavailable = "approvals_unavailable"

// ask answers a call refused for want of a grant (d). A plain retry of a
// call whose request the same caller made is decided finds the decision
// (decision 0113): an approved one's grant is checked as if presented, a
// denied one is refused as denied. Otherwise ask leaves the request for a
// human and adds where it is decided to the refusal. A bucket that does
// not answer is a momentary 503; a request that cannot be recorded for any
// other reason (unreadable material, too many) leaves the refusal as it
// is, the reason in its detail.
func (c *Chain) ask(ctx context.Context, d *deny.Denied, p *call.Principal, t *call.Tool, in protoreflect.Message, st *state) (grant.Result, error) {
	rec, found, err := c.Approvals.Recall(ctx, p, t, in)
	if err == nil && found {
		tag(st.row, "approval_id", rec.ID)
		if rec.Denied {
			return grant.Result{}, deny.Deny(deny.ApprovalRefused, "approval request "+rec.ID+" for this call was denied by "+rec.Approver)
		}
		res, err := c.Grants.Check(ctx, rec.Grant, p, t, in)
		if err == nil {
			// A grant the caller presented itself was spent by that call;
			// whether it was is asked, not guessed, and step 6's spend
			// still decides for a grant that is not.
			if spent, serr := c.Grants.Spent(ctx, res); serr != nil || !spent {
				return res, nil
			}
			err = errors.New("it was spent by a call that presented it")
		}
		// The decision cannot serve this call: its grant was used, or has
		// aged out. Recall took the request off the reuse key, so the call
		// asks a human anew, as one without a decision does.
		d.Detail += "; the grant of approval request " + rec.ID + " cannot serve this call (" + err.Error() + ")"
	}
	asked := approval.Asked{}
	if err == nil {
		asked, err = c.Approvals.Ask(ctx, p, t, in, st.row.EventId)
	}
	if u := (*approval.Unavailable)(nil); errors.As(err, &u) {
		return grant.Result{}, deny.Fail(deny.ToolUnavailable, KindApprovalsUnavailable, "no approval request could be found or recorded: "+err.Error())
	}
	if err != nil {
		d.Detail += "; no approval request was recorded: " + err.Error()
		return grant.Result{}, d
	}
	tag(st.row, "approval_id", asked.ID)
	d.Detail += "; approval request " + asked.ID
	d.Extra["approval"] = asked.Ref
	st.approval = &asked
	return grant.Result{}, d
}

// redeem turns Garm-Approval's id into the grant its decision carries, for
// step 5 to check as if the caller had presented it. A request still
// waiting is refused as grant_required again, with where it is decided; any
// other id the caller has no approved request under — missing, expired,
// denied, another caller's — is refused alike.
func (c *Chain) redeem(ctx context.Context, req *Request, p *call.Principal, t *call.Tool, in protoreflect.Message, st *state) (string, error) {
	id := req.Approval
	if c.Approvals == nil {
		return "", deny.Deny(deny.ApprovalRefused, "an approval id was presented and approvals are off")
	}
	if pending.ValidID(id) {
		tag(st.row, "approval_id", id)
	}
	g, asked, err := c.Approvals.Redeem(ctx, id, p, t)
	if err == nil {
		if req.ApprovalDigest != "" && req.ApprovalDigest != asked.MaterialDigest {
			return "", deny.Deny(deny.ApprovalRefused, "approval request "+id+" binds other material than the state it was presented with")
		}
		return g, nil
	}
	var r *approval.Refusal
	if !errors.As(err, &r) {
		return "", deny.Fail(deny.Internal, "approvals", "the approval request could not be read: "+err.Error())
	}
	if r.Outcome != approval.Undecided {
		return "", deny.Deny(deny.ApprovalRefused, r.Detail)
	}
	_, required := c.Grants.Check(ctx, "", p, t, in)
	d := (*deny.Denied)(nil)
	if !errors.As(required, &d) || d.Code != deny.GrantRequired {
		return "", asInternal(required, "grant")
	}
	d.Detail = r.Detail
	d.Extra["approval"] = r.Asked.Ref
	st.approval = &r.Asked
	return "", d
}

// approvalStatus answers GET /approvals/<id>: where the caller's request
// stands, never its grant. Another caller's id and one that never was
// answer the same.
func (c *Chain) approvalStatus(ctx context.Context, req *Request, st *state) (*Response, error) {
	if req.HeaderFault != "" {
		return nil, deny.Deny(deny.MalformedHeaders, req.HeaderFault)
	}
	gen := c.Serving.Load()
	if gen == nil {
		return nil, deny.Fail(deny.NoCatalogue, "no_catalogue", "no catalogue generation is serving")
	}
	st.row.CatalogueDigest = gen.Digest
	p, err := c.Authn.Authenticate(ctx, req.Authorization, gen)
	if err != nil {
		return nil, err
	}
	rowstep.Principal(st.row, p)
	st.digest = gen.Digest
	id := strings.TrimPrefix(req.Path, ApprovalsPath)
	status, err := c.Approvals.Status(ctx, id, p, c.Now())
	switch {
	case errors.Is(err, pending.ErrNotFound):
		return nil, deny.Deny(deny.ApprovalNotFound, "no approval request of the caller's is "+clipped(id))
	case err != nil:
		return nil, deny.Fail(deny.Internal, "approvals", "the approval request could not be read: "+err.Error())
	}
	tag(st.row, "approval_id", id)
	body, err := json.Marshal(struct {
		ID     string         `json:"id"`
		Status pending.Status `json:"status"`
	}{id, status})
	if err != nil {
		return nil, deny.Fail(deny.Internal, "encode", err.Error())
	}
	return &Response{Status: http.StatusOK, Body: body, ContentType: "application/json"}, nil
}

// clipped bounds an id the caller sent before it reaches the row.
func clipped(id string) string {
	const most = 64
	if len(id) > most {
		return id[:most] + "…"
	}
	return id
}
