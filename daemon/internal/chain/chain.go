package chain

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/garm-dev/garm/daemon/internal/approval"
	"github.com/garm-dev/garm/daemon/internal/audit"
	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/chain/authn"
	"github.com/garm-dev/garm/daemon/internal/chain/card"
	"github.com/garm-dev/garm/daemon/internal/chain/dispatch"
	"github.com/garm-dev/garm/daemon/internal/chain/grant"
	"github.com/garm-dev/garm/daemon/internal/chain/input"
	"github.com/garm-dev/garm/daemon/internal/chain/instance"
	rowstep "github.com/garm-dev/garm/daemon/internal/chain/ledger"
	"github.com/garm-dev/garm/daemon/internal/chain/limit"
	"github.com/garm-dev/garm/daemon/internal/chain/redact"
	"github.com/garm-dev/garm/daemon/internal/chain/visibility"
	"github.com/garm-dev/garm/daemon/internal/codec"
	"github.com/garm-dev/garm/daemon/internal/deny"
	"github.com/garm-dev/garm/daemon/internal/ledger"
	"github.com/garm-dev/garm/daemon/internal/listing"
	"github.com/garm-dev/garm/daemon/internal/tracing"
	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Config is what the chain runs with; every field is required unless it
// says otherwise.
type Config struct {
	Serving  *catalogue.Serving
	Authn    *authn.Authenticator
	Input    *input.Checker
	Redact   *redact.Redactor
	Lister   *listing.Lister
	Dispatch *dispatch.Dispatcher
	Recorder ledger.Recorder
	// Grants is step 5; nil when approval grants are off (a MODE_GRANT
	// tool then does not mount).
	Grants *grant.Verifier
	// Limits counts calls against their tools' limits (after step 4,
	// before step 5); nil without --limits (a catalogue with limits then
	// does not mount, and a limited tool fails closed if it did).
	Limits *limit.Limiter
	// LimitRefused, when set, is told each call a limit refused, by tool
	// and limit id (for metrics).
	LimitRefused func(tool, limit string)
	// Approvals is where a call refused for want of a grant leaves a
	// request for a human, and where Garm-Approval collects the decided
	// grant for step 5; nil when approvals are off (--approvals).
	Approvals *approval.Desk
	// Audit is the audit sink; nil when there is none (a LEVEL_AUDIT tool
	// then does not mount).
	Audit audit.Sink
	// Notify is step 10; nil when --notify is off (a MODE_NOTIFY tool then
	// does not mount).
	Notify Notifier
	// Quarantine says which packages' running services do not implement
	// the catalogue's contract, and why; their visible tools answer 503.
	// nil checks nothing. Consulted on every call: keep it a lookup.
	Quarantine interface {
		Quarantined(pkg string) (reason string, ok bool)
	}
	// ToolTimeout is the deadline of a call whose caller set none, and the
	// ceiling on one it set.
	ToolTimeout time.Duration
	// Version is garmd's version, on every row.
	Version string
	// Observe, when set, is told how each call ended (for metrics); tool is
	// "" when no visible tool was resolved. ctx carries the call's span;
	// with tracing off it is context.Background(), which has none.
	Observe func(ctx context.Context, tool, outcome, code string, d time.Duration)
	// Tracer records each call's spans; nil is tracing off.
	Tracer *tracing.Tracer
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Notifier is step 10: it takes a completed row for a human on the loop
// and never fails the call.
type Notifier interface {
	Notify(e *ledgerv1.Event)
}

// Chain runs calls.
type Chain struct {
	Config
}

// New is a chain over c.
func New(c Config) *Chain {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return &Chain{Config: c}
}

// The surfaces a call can arrive on, as the row records them.
const (
	SurfaceHTTP = "http"
	SurfaceMCP  = "mcp"
)

// Request is one HTTP request as the chain needs it. Each header field is
// the one copy the caller sent: a surface reads every security-relevant
// header once (toolplane.ReadHeaders) and reports any it could not read so
// in HeaderFault.
type Request struct {
	HTTPMethod string
	// Path is the request target's path as sent, still escaped: the
	// route. A target whose escaped form is not exactly a route is not
	// one.
	Path          string
	Authorization string
	// JSON is true when the body is protojson (Content-Type
	// application/json); the answer uses the same encoding.
	JSON bool
	Body []byte
	// TimeoutMs is the Garm-Timeout-Ms header.
	TimeoutMs     string
	Traceparent   string
	Tracestate    string
	CorrelationID string
	// Grant is the Garm-Grant header: an approval grant.
	Grant string
	// Approval is the Garm-Approval header: the id of an approval request
	// whose decided grant step 5 verifies and spends as if it were Grant.
	// A surface never sets both (toolplane.ReadHeaders refuses them).
	Approval string
	// ApprovalDigest, when set, is the material digest the surface was
	// told Approval binds (MCP's requestState): a request binding another
	// is refused.
	ApprovalDigest string
	// HeaderFault, when set, says which header could not be read once (sent
	// twice, or malformed): the call is refused before anything else is
	// judged, and this is the row's detail.
	HeaderFault string
	// Overloaded is set by a surface that shed the call because as many
	// calls as it takes are in flight: the call is refused 503 with
	// Retry-After, and recorded.
	Overloaded bool
	// Surface is what the call arrived on, for the row: "http" or "mcp".
	Surface string
	// ClientName is the name the client declared for itself, for the row
	// (attribution only; the row bounds it and replaces its control
	// characters).
	ClientName string
	// ToolName, when set, names the tool by its FQN instead of its route
	// (MCP's tools/call); Path is then what the row records until the tool
	// resolves, and its route after.
	ToolName string
	// ArgumentFault, when set, says which value the surface carries beside
	// the body (MCP's params and _meta) could not be read once: the call
	// is refused invalid_argument once the caller is authenticated, and
	// this is the row's detail.
	ArgumentFault string
	// Admit asks only whether the caller is admitted: authenticated against
	// the serving generation, as a call would be. A refusal is answered and
	// recorded like a call's; admission writes no row (MCP's lifecycle
	// methods).
	Admit bool
	// Page asks for one page of the caller's agent listing instead of a
	// call (MCP's tools/list). Like a successful listing, a page writes no
	// row; a refusal does.
	Page *PageRequest
	// ApprovalFault, when set, says why the surface could not open its own
	// token of an approval request (MCP's requestState): the call is
	// refused approval_refused before step 5, and this is the row's detail.
	ApprovalFault string
	// ApprovalHolder, when set, is the caller the surface's approval token
	// was issued to: a call by anyone else is refused approval_refused.
	ApprovalHolder *Holder
}

// Response is what the caller is answered.
type Response struct {
	Status      int
	Body        []byte
	ContentType string
	// Code is the wire code of a refusal or failure (deny.WireCode), the
	// body's code member; "" when the call succeeded. A surface that
	// answers in its own shape maps by it, never by Status alone: a
	// tool's own 404 is not not_found.
	Code string
	// EventID is the ledger row's id; empty when the call wrote no row (a
	// successful listing).
	EventID string
	// Digest is the generation the call was decided against; empty when
	// none was serving, and before the caller authenticated: nobody learns
	// anything about what is served before saying who they are (the row
	// records it regardless).
	Digest string
	// Challenge asks for a bearer token (WWW-Authenticate).
	Challenge bool
	// AllowPOST answers a method other than POST (Allow: POST).
	AllowPOST bool
	// RetryAfter says the refusal is momentary (Retry-After).
	RetryAfter bool
	// Limit is set on a rate_limited refusal: its Retry-After in seconds
	// and its rate-limit header fields (limit, remaining, reset).
	Limit *deny.LimitAnswer
	// Approval is the open approval request of a call refused for want of
	// a grant (the body's approval member, and what it binds); nil
	// otherwise. For surfaces that send the caller to it in their own
	// shape (MCP).
	Approval *approval.Asked
	// Principal is the caller once authenticated; nil before. For a
	// surface that binds its own tokens to the caller (MCP's requestState).
	Principal *call.Principal
	// Page is the page a PageRequest asked for, when it succeeded.
	Page *Page
}

// state is one call's progress, read by Run's deferred completion.
type state struct {
	row *ledgerv1.Event
	// digest is the generation the caller is told about: set once the
	// caller has said who it is.
	digest   string
	tool     *call.Tool
	noRecord bool
	// dispatched is true once the request went to the tool.
	dispatched bool
	// approval is the open request the refusal names, if any.
	approval *approval.Asked
	// verdict is what the instance rules decided (steps 4 and 7).
	verdict instance.Verdict
	// principal is the caller, once authenticated.
	principal *call.Principal
	// counted is what the limit step counted, given back in Run's
	// deferred function: a rate's when the call was not dispatched, a
	// concurrency bound's always.
	counted limit.Ticket
}

// Run takes one call through the chain. It always answers, and writes
// exactly one ledger row unless the call was a successful listing, page or
// admission.
func (c *Chain) Run(ctx context.Context, req *Request) (resp *Response) {
	start := c.Now()
	eventID := rowstep.NewEventID(start)
	st := &state{row: rowstep.Open(eventID, start, req.Path, c.Version)}
	rowstep.Surface(st.row, req.Surface, req.ClientName)
	ctx, span := c.startSpan(ctx, req, start)
	var err error
	defer func() {
		if p := recover(); p != nil {
			err = deny.Fail(deny.Internal, "panic", fmt.Sprint("panic: ", p))
			c.Logger.ErrorContext(ctx, "garmd: a call panicked", "event_id", eventID, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			resp = refusal(err)
			st.noRecord = false
		}
		if st.counted.Counted() {
			c.Limits.Release(ctx, &st.counted, st.dispatched)
		}
		resp.Digest = st.digest
		resp.Principal = st.principal
		if resp.Status == http.StatusForbidden {
			resp.Approval = st.approval
		}
		latency := c.Now().Sub(start)
		if st.noRecord {
			resp.EventID = ""
		} else {
			resp.EventID = eventID
			if v := &st.verdict; v.Rule != "" || v.RowsFiltered != 0 || v.AuditOnly != nil || v.ErrorClass != "" {
				rowstep.Instance(st.row, v.Rule, v.RowsFiltered, v.FiltersApplied, v.AuditOnly, v.ErrorClass)
			}
			rowstep.Finish(st.row, err, latency)
			c.record(ctx, st.row)
			c.afterLedger(ctx, st)
		}
		// An admission is no call: only its refusal counts as one.
		if c.Observe != nil && !(req.Admit && err == nil) {
			c.observe(ctx, st, err, latency)
		}
		finishSpan(span, st, err, resp.EventID)
	}()
	resp, err = c.run(ctx, req, st, start)
	if err != nil {
		resp = refusal(err)
	}
	return resp
}

func (c *Chain) observe(ctx context.Context, st *state, err error, latency time.Duration) {
	tool := ""
	if st.tool != nil {
		tool = st.tool.FQN
	}
	code := ""
	if err != nil {
		code = deny.WireCode(err)
	}
	if c.Tracer == nil {
		// No span to lend the latency an exemplar, so nothing to search
		// for: a walk of the request's contexts tracing off need not pay
		// for (docs/decisions/0143).
		ctx = context.Background()
	}
	c.Observe(ctx, tool, deny.Outcome(err), code, latency)
}

func (c *Chain) run(ctx context.Context, req *Request, st *state, start time.Time) (*Response, error) {
	if req.Overloaded {
		return nil, deny.Fail(deny.Overloaded, "overloaded", "shed: as many calls as the plane takes were in flight")
	}
	if c.Approvals != nil && req.HTTPMethod == http.MethodGet && strings.HasPrefix(req.Path, ApprovalsPath) {
		return c.approvalStatus(ctx, req, st)
	}
	if req.HTTPMethod != http.MethodPost {
		return nil, deny.Deny(deny.MethodNotAllowed, "method "+req.HTTPMethod)
	}
	// Before anything is judged: a header sent twice has no one reading,
	// and a proxy in front may have read the other copy. Every route
	// answers it the same, so it tells nothing about what is served.
	if req.HeaderFault != "" {
		return nil, deny.Deny(deny.MalformedHeaders, req.HeaderFault)
	}
	gen := c.Serving.Load() // pinned for the whole call
	if gen == nil {
		return nil, deny.Fail(deny.NoCatalogue, "no_catalogue", "no catalogue generation is serving")
	}
	st.row.CatalogueDigest = gen.Digest

	// Step 1: authenticate.
	p, err := c.authenticate(ctx, req.Authorization, gen)
	if err != nil {
		return nil, err
	}
	rowstep.Principal(st.row, p)
	st.digest = gen.Digest
	st.principal = p
	if req.ArgumentFault != "" {
		return nil, deny.Deny(deny.InvalidArgument, req.ArgumentFault)
	}

	switch {
	case req.Admit:
		st.noRecord = true
		return &Response{Status: http.StatusOK}, nil
	case req.Page != nil:
		return c.page(gen, p, req.Page, st)
	case req.Path == catalogue.ListingMethod:
		return c.list(gen, p, req, st)
	}

	// Step 2: route and visibility; an unknown route and an invisible tool
	// answer the same.
	tool := route(gen, req, st)
	if tool == nil {
		return nil, deny.Deny(deny.NotFound, "no tool is served at this route")
	}
	if gate := visibility.Check(p, tool); gate != visibility.Visible {
		rowstep.Tool(st.row, tool)
		return nil, deny.Deny(deny.NotFound, "tool "+tool.FQN+" is not visible: "+gate.String())
	}
	rowstep.Tool(st.row, tool)
	st.tool = tool
	// Only after visibility: a caller who may not see the tool learns
	// nothing of its package's state.
	if c.Quarantine != nil {
		if reason, ok := c.Quarantine.Quarantined(tool.Package); ok {
			return nil, deny.Fail(deny.ToolUnavailable, "quarantined", "the tool's package is quarantined: "+reason)
		}
	}
	// From here on, everything the caller sent is judged before step 5
	// spends anything (docs/decisions/0030): the deadline and the body
	// first.
	deadline, err := dispatch.Deadline(start, req.TimeoutMs, c.ToolTimeout)
	if err != nil {
		return nil, err
	}
	// Step 3: input, after the body is decoded: (a) the write check; (b)
	// the request's own rules, with violations listed as far as this
	// caller was shown the input.
	_, inputSpan := c.Tracer.StartStep(ctx, tracing.StepInput)
	in, idempotencyKey, err := c.input(gen, p, tool, req)
	tracing.EndStep(inputSpan, err)
	if err != nil {
		return nil, err
	}
	shape := p.Shape()

	// Step 4: the tool's require rules over the caller and the request,
	// before step 5 verifies or spends anything: a refusal spends no grant
	// and opens no approval request, and no grant bypasses a rule.
	rules := gen.Rules().Of(tool)
	view := p.View
	if rules != nil && view == nil {
		view = gen.PrincipalView(p)
	}
	if rules != nil && len(rules.Require) > 0 {
		_, ruleSpan := c.Tracer.StartStep(ctx, tracing.StepInstanceRequire)
		err := rules.CheckRequest(view, in, &st.verdict)
		tracing.EndStep(ruleSpan, err)
		if err != nil {
			return nil, err
		}
	}

	// A surface's own approval token that did not open, or was issued to
	// another caller, refuses the call whatever the tool declares.
	if err := approvalToken(req, p); err != nil {
		return nil, err
	}
	// The limits, once everything the caller sent has been judged and
	// before step 5: a refusal spends no grant and opens no approval
	// request, and a refusal after this gives the count back (Run).
	if limits := gen.Limits().Of(tool); limits != nil {
		if err := c.limit(ctx, limits, p, st); err != nil {
			return nil, err
		}
	}
	// Step 5: the approval grant, verified now and spent last.
	approval, err := c.approve(ctx, req, p, tool, in, st, deadline)
	if err != nil {
		return nil, err
	}

	// Step 6: dispatch. Every local failure that can stop the call comes
	// before the spend: the bus, then the audit write-ahead.
	hop := &dispatch.Hop{
		CallID:         st.row.EventId,
		CorrelationID:  correlationID(req.CorrelationID, st.row.EventId),
		Deadline:       deadline,
		Traceparent:    traceparent(req.Traceparent),
		Tracestate:     tracestate(req.Tracestate),
		IdempotencyKey: idempotencyKey,
		GrantJTI:       approval.JTI,
	}
	st.row.CorrelationId = hop.CorrelationID
	if err := c.Dispatch.Ready(tool); err != nil {
		return nil, err
	}
	// The governance writes on the bus are bounded by the call's deadline:
	// none outlives the answer it decides. A tool that declares none costs
	// no context.
	if audited(tool) || needsGrant(tool) {
		governed, cancel := context.WithDeadline(ctx, deadline)
		defer cancel()
		if err := c.writeAhead(governed, tool, st.row); err != nil {
			return nil, err
		}
		// The spend is the last act before the request goes to the tool.
		if err := c.spend(governed, tool, approval, st.row.EventId); err != nil {
			return nil, err
		}
	}
	st.dispatched = true
	out, err := c.dispatch(ctx, tool, p, hop, in)
	if err != nil {
		return nil, err
	}

	// Step 7: the reveal rules over the decoded answer — one that does not
	// hold answers as the tool's own 404 — then the row filters, in place,
	// so redaction works only on what is kept.
	if rules != nil && len(rules.Reveal)+len(rules.Filter) > 0 {
		_, ruleSpan := c.Tracer.StartStep(ctx, tracing.StepInstanceAnswer)
		err := rules.CheckAnswer(view, in, out, &st.verdict)
		tracing.EndStep(ruleSpan, err)
		if err != nil {
			return nil, err
		}
	}
	// Step 8: redaction, the field plan for this caller's shape, then the
	// cards in the answer projected for it.
	_, redactSpan := c.Tracer.StartStep(ctx, tracing.StepRedact)
	res, err := c.Redact.Apply(tool, shape, p.Tenant, out)
	if err != nil {
		err = deny.Fail(deny.Internal, "redaction", err.Error())
	}
	tracing.EndStep(redactSpan, err)
	if err != nil {
		return nil, err
	}
	st.row.RedactionCount, st.row.DisclosedCount, st.row.RedactionPlan = res.Count, res.Disclosed, res.Plan
	if tool.AnswersCards {
		_, cardSpan := c.Tracer.StartStep(ctx, tracing.StepProjectCards)
		projected, err := card.Project(tool, shape, gen.Numbered, out)
		if err != nil {
			err = asInternal(err, "card_invalid")
		}
		tracing.EndStep(cardSpan, err)
		if err != nil {
			return nil, err
		}
		st.row.RedactionCount += projected.Withheld
	}
	body, err := codec.EncodeAnswer(out, req.JSON)
	if err != nil {
		return nil, deny.Fail(deny.Internal, "encode", "the answer did not encode: "+err.Error())
	}
	// Step 9 (the ledger), step 10 (notify) and the audit outcome complete
	// in Run's deferred function, on every path.
	return &Response{Status: http.StatusOK, Body: body, ContentType: codec.ContentType(req.JSON)}, nil
}

// input decodes the body and runs step 3: (a) the write check; (b) the
// request's own rules, with violations listed as far as this caller was
// shown the input. It returns the request and the runner-sourced
// idempotency key, when one was set.
func (c *Chain) input(gen *catalogue.Generation, p *call.Principal, tool *call.Tool, req *Request) (protoreflect.Message, string, error) {
	in, err := codec.DecodeRequest(tool.Input, req.Body, req.JSON)
	if err != nil {
		return nil, "", deny.Deny(deny.InvalidArgument, err.Error())
	}
	idempotencyKey, err := c.Input.CheckWrites(p, tool, in)
	if err != nil {
		return nil, "", err
	}
	validator := gen.Validator()
	if validator == nil {
		return nil, "", deny.Fail(deny.Internal, "validation", "the serving generation was not mounted: it has no validator")
	}
	if err := c.Input.Validate(validator, tool, p.Shape(), in); err != nil {
		return nil, "", asInternal(err, "validation")
	}
	return in, idempotencyKey, nil
}

func (c *Chain) list(gen *catalogue.Generation, p *call.Principal, req *Request, st *state) (*Response, error) {
	audience, err := listing.ParseRequest(req.Body)
	if err != nil {
		return nil, err
	}
	body, err := c.Lister.List(gen, p, audience)
	if err != nil {
		return nil, deny.Fail(deny.Internal, "listing", err.Error())
	}
	st.noRecord = true
	return &Response{Status: http.StatusOK, Body: body, ContentType: "application/json"}, nil
}

// asInternal keeps a step's refusal (deny.Denied) or failure (deny.Failed)
// as it is and makes anything else an internal failure of the given kind.
func asInternal(err error, kind string) error {
	if d := (*deny.Denied)(nil); errors.As(err, &d) {
		return err
	}
	if f := (*deny.Failed)(nil); errors.As(err, &f) {
		return err
	}
	return deny.Fail(deny.Internal, kind, err.Error())
}

func refusal(err error) *Response {
	status, body := deny.Wire(err)
	return &Response{
		Status:      status,
		Body:        body,
		ContentType: "application/json",
		Code:        deny.WireCode(err),
		Challenge:   status == http.StatusUnauthorized,
		AllowPOST:   status == http.StatusMethodNotAllowed,
		RetryAfter:  momentary(err),
		Limit:       limitAnswer(err),
	}
}

// limitAnswer is a rate_limited refusal's header fields; nil for any other
// end.
func limitAnswer(err error) *deny.LimitAnswer {
	if d := (*deny.Denied)(nil); errors.As(err, &d) {
		return d.Limit
	}
	return nil
}

// momentary reports whether err refuses a call only for now: the plane was
// full, shutting down, its approval-request bucket or a limit's counter did
// not answer.
func momentary(err error) bool {
	f := (*deny.Failed)(nil)
	return errors.As(err, &f) && (f.Code == deny.Overloaded || f.Code == deny.ShuttingDown || f.Code == deny.LimitUnavailable || f.Kind == KindApprovalsUnavailable)
}
