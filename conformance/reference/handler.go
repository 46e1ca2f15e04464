package reference

import (
	"context"
	"errors"
	"time"

	conformancev1 "github.com/garm-dev/garm/conformance/gen/garm/conformance/v1"
	"github.com/garm-dev/garm/runtime/toolbind"
	"github.com/garm-dev/garm/runtime/wire"
	"google.golang.org/protobuf/proto"
)

// Handler serves garm.conformance.v1.Conformance exactly as the hop contract
// specifies each tool.
type Handler struct{}

var _ conformancev1.ConformanceHandler = Handler{}

// Echo answers with the request's text and data.
func (Handler) Echo(_ context.Context, req *conformancev1.EchoRequest) (*conformancev1.EchoResponse, error) {
	return &conformancev1.EchoResponse{Text: req.Text, Data: req.Data}, nil
}

// Refuse refuses with the request's code and message, whatever they are:
// the runtime decides what a code outside the refusal codes becomes.
func (Handler) Refuse(_ context.Context, req *conformancev1.RefuseRequest) (*conformancev1.RefuseResponse, error) {
	return nil, toolbind.Refuse(req.GetCode(), req.GetMessage())
}

// Fail fails with a plain error whose text is the request's message.
func (Handler) Fail(_ context.Context, req *conformancev1.FailRequest) (*conformancev1.FailResponse, error) {
	return nil, errors.New(req.GetMessage())
}

// Nothing returns no answer and no error.
func (Handler) Nothing(context.Context, *conformancev1.NothingRequest) (*conformancev1.NothingResponse, error) {
	return nil, nil
}

// Sleep sleeps for millis, or until ctx ends when millis is 0 or ctx ends
// first.
func (Handler) Sleep(ctx context.Context, req *conformancev1.SleepRequest) (*conformancev1.SleepResponse, error) {
	start := time.Now()
	var timer <-chan time.Time
	if ms := req.GetMillis(); ms > 0 {
		t := time.NewTimer(time.Duration(ms) * time.Millisecond)
		defer t.Stop()
		timer = t.C
	}
	cut := false
	select {
	case <-timer:
	case <-ctx.Done():
		cut = true
	}
	return &conformancev1.SleepResponse{
		CutShort:    proto.Bool(cut),
		SleptMillis: proto.Uint32(uint32(time.Since(start).Milliseconds())),
	}, nil
}

// Inspect answers with the invocation on ctx, flattened.
func (Handler) Inspect(ctx context.Context, _ *conformancev1.InspectRequest) (*conformancev1.InspectResponse, error) {
	inv := wire.InvocationFrom(ctx)
	attr := inv.GetAttribution()
	out := &conformancev1.InspectResponse{
		CallId:                 proto.String(inv.GetCallId()),
		Tenant:                 proto.String(attr.GetTenant()),
		App:                    proto.String(attr.GetApp()),
		RunId:                  proto.String(attr.GetRunId()),
		CorrelationId:          proto.String(attr.GetCorrelationId()),
		CausationId:            proto.String(attr.GetCausationId()),
		BudgetId:               proto.String(attr.GetBudgetId()),
		Feature:                proto.String(attr.GetFeature()),
		Tags:                   attr.GetTags(),
		PrincipalSubject:       proto.String(inv.GetPrincipal().GetSubject()),
		PrincipalKind:          proto.Int32(int32(inv.GetPrincipal().GetKind())),
		Scopes:                 inv.GetScopes(),
		Traceparent:            proto.String(inv.GetTraceparent()),
		Tracestate:             proto.String(inv.GetTracestate()),
		IdempotencyKey:         proto.String(inv.GetIdempotencyKey()),
		ContractVersion:        proto.String(inv.GetContractVersion()),
		GrantJti:               proto.String(inv.GetGrantJti()),
		Agent:                  proto.String(inv.GetAgent()),
		DeadlineUnixMillis:     proto.Int64(0),
		HandlerRemainingMillis: proto.Int64(-1),
	}
	for _, a := range inv.GetAct() {
		out.ActSubjects = append(out.ActSubjects, a.GetSubject())
	}
	if d := inv.GetDeadline(); d != nil {
		out.DeadlineUnixMillis = proto.Int64(d.AsTime().UnixMilli())
	}
	if d, ok := ctx.Deadline(); ok {
		out.HandlerRemainingMillis = proto.Int64(time.Until(d).Milliseconds())
	}
	return out, nil
}
