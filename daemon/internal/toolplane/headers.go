package toolplane

import (
	"net/http"
	"net/textproto"
	"strings"

	"github.com/garm-dev/garm/daemon/internal/chain"
	"github.com/garm-dev/garm/daemon/internal/codec"
)

// Headers garmd reads and writes.
const (
	EventIDHeader       = "Garm-Event-Id"
	DigestHeader        = "Garm-Catalogue-Digest"
	TimeoutHeader       = "Garm-Timeout-Ms"
	CorrelationIDHeader = "Garm-Correlation-Id"
	GrantHeader         = "Garm-Grant"
	// ApprovalHeader names an approval request whose decided grant the
	// call presents in place of Garm-Grant.
	ApprovalHeader = "Garm-Approval"
)

// singleHeaders are the headers that decide who calls, with what authority
// and how the body reads: each is read at most once. A proxy in front that
// read another copy than garmd would authorize another identity, spend
// another grant or parse another body than garmd does.
var singleHeaders = [...]string{"Authorization", GrantHeader, ApprovalHeader, "Content-Type", TimeoutHeader, CorrelationIDHeader}

// ReadHeaders fills req's header fields from h, reading every
// security-relevant header once. A header in singleHeaders sent more than
// once — as repeated fields, or under a spelling a proxy may fold into it
// (garm_grant), or Garm-Grant beside Garm-Approval — or a Content-Type that is not one media type, sets
// req.HeaderFault, which the chain refuses before it judges anything else.
// Trace context follows W3C Trace Context: tracestate fields are combined,
// and a traceparent sent twice is malformed, so it is dropped (attribution
// never fails a call).
func ReadHeaders(h http.Header, req *chain.Request) {
	for _, name := range singleHeaders {
		if len(h[name]) > 1 {
			req.HeaderFault = name + " was sent more than once"
			return
		}
	}
	if name := foldedSingleHeader(h); name != "" {
		req.HeaderFault = name + " was also sent under another spelling"
		return
	}
	// Two grants for one call: which one a proxy in front acted on is
	// anybody's guess, so neither is.
	if len(h[GrantHeader]) > 0 && len(h[ApprovalHeader]) > 0 {
		req.HeaderFault = GrantHeader + " and " + ApprovalHeader + " were both sent"
		return
	}
	json, err := codec.RequestEncoding(first(h["Content-Type"]))
	if err != nil {
		req.HeaderFault = err.Error()
		return
	}
	req.JSON = json
	req.Authorization = first(h["Authorization"])
	req.Grant = first(h[GrantHeader])
	req.Approval = first(h[ApprovalHeader])
	req.TimeoutMs = first(h[TimeoutHeader])
	req.CorrelationID = first(h[CorrelationIDHeader])
	if tp := h["Traceparent"]; len(tp) == 1 {
		req.Traceparent = tp[0]
	}
	switch ts := h["Tracestate"]; len(ts) {
	case 0:
	case 1:
		req.Tracestate = ts[0]
	default:
		req.Tracestate = strings.Join(ts, ",")
	}
}

// foldedSingleHeader is the name of a single header that h also carries
// under a field name that is not its canonical one but that a proxy may
// treat as the same (an underscore for a dash): "" when there is none. Only
// names with an underscore are looked at, so an ordinary request costs a
// scan of its few keys.
func foldedSingleHeader(h http.Header) string {
	for key := range h {
		if strings.IndexByte(key, '_') < 0 {
			continue
		}
		folded := textproto.CanonicalMIMEHeaderKey(strings.ReplaceAll(key, "_", "-"))
		for _, name := range singleHeaders {
			if folded == name {
				return name
			}
		}
	}
	return ""
}

func first(values []string) string {
	if len(values) == 0 {
		return ""
	}
	return values[0]
}
