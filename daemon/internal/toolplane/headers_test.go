package toolplane_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/chain"
	"github.com/garm-dev/garm/daemon/internal/toolplane"
)

const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func TestEverySecurityHeaderIsReadOnce(t *testing.T) {
	for _, name := range []string{"Authorization", "Garm-Grant", "Content-Type", "Garm-Timeout-Ms", "Garm-Correlation-Id"} {
		t.Run(name, func(t *testing.T) {
			// The same value twice is refused too: which copy a proxy
			// read is not garmd's to guess.
			for _, values := range [][]string{{"a", "b"}, {"x", "x"}, {"", "x"}} {
				var req chain.Request
				toolplane.ReadHeaders(http.Header{name: values}, &req)
				if !strings.Contains(req.HeaderFault, name) {
					t.Errorf("%s %q: fault %q", name, values, req.HeaderFault)
				}
			}
			// Under a spelling a proxy may fold into it.
			folded := strings.ReplaceAll(strings.ToLower(name), "-", "_")
			if folded != strings.ToLower(name) {
				var req chain.Request
				toolplane.ReadHeaders(http.Header{name: {"x"}, folded: {"y"}}, &req)
				if !strings.Contains(req.HeaderFault, name) {
					t.Errorf("%s and %s: fault %q", name, folded, req.HeaderFault)
				}
			}
		})
	}
}

func TestHeadersSentOnceAreReadAsSent(t *testing.T) {
	var req chain.Request
	toolplane.ReadHeaders(http.Header{
		"Authorization":       {"Bearer t"},
		"Garm-Grant":          {"g"},
		"Content-Type":        {"application/json; charset=utf-8"},
		"Garm-Timeout-Ms":     {"250"},
		"Garm-Correlation-Id": {"corr-1"},
		"Traceparent":         {traceparent},
		"Tracestate":          {"a=1"},
		// Other headers may repeat as they like, underscores included.
		"X_other": {"1", "2"},
		"Accept":  {"a", "b"},
	}, &req)
	want := chain.Request{Authorization: "Bearer t", Grant: "g", JSON: true, TimeoutMs: "250",
		CorrelationID: "corr-1", Traceparent: traceparent, Tracestate: "a=1"}
	if req.HeaderFault != "" || req.Authorization != want.Authorization || req.Grant != want.Grant || req.JSON != want.JSON ||
		req.TimeoutMs != want.TimeoutMs || req.CorrelationID != want.CorrelationID ||
		req.Traceparent != want.Traceparent || req.Tracestate != want.Tracestate {
		t.Fatalf("read %+v", req)
	}
}

func TestTraceContextFollowsW3C(t *testing.T) {
	var req chain.Request
	toolplane.ReadHeaders(http.Header{
		"Traceparent": {traceparent, traceparent},
		"Tracestate":  {"a=1", "b=2,c=3"},
	}, &req)
	if req.HeaderFault != "" {
		t.Fatalf("trace headers failed the call: %s", req.HeaderFault)
	}
	if req.Traceparent != "" {
		t.Errorf("a repeated traceparent was kept: %q", req.Traceparent)
	}
	if req.Tracestate != "a=1,b=2,c=3" {
		t.Errorf("tracestate fields combined to %q", req.Tracestate)
	}
}

func TestAContentTypeThatIsNotOneMediaTypeIsAFault(t *testing.T) {
	for ct, json := range map[string]bool{"application/json": true, "application/jsonx": false, "application/proto": false, "": false} {
		var req chain.Request
		toolplane.ReadHeaders(http.Header{"Content-Type": {ct}}, &req)
		if req.HeaderFault != "" || req.JSON != json {
			t.Errorf("%q: json %v fault %q", ct, req.JSON, req.HeaderFault)
		}
	}
	var req chain.Request
	toolplane.ReadHeaders(http.Header{"Content-Type": {"application/json, application/proto"}}, &req)
	if req.HeaderFault == "" {
		t.Error("a list of media types was read as one")
	}
}
