package chain

import (
	"strings"
	"testing"
)

func TestCallerAssertedHeadersAreForwardedOnlyWhenWellFormed(t *testing.T) {
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	cases := []struct {
		name string
		got  string
		want string
	}{
		{"a W3C traceparent", traceparent(tp), tp},
		{"uppercase hex", traceparent(strings.ToUpper(tp)), ""},
		{"another version", traceparent("01" + tp[2:]), ""},
		{"an all-zero trace id", traceparent("00-00000000000000000000000000000000-00f067aa0ba902b7-01"), ""},
		{"a newline smuggled in", traceparent(tp[:54] + "\n"), ""},
		{"too long", traceparent(tp + "-x"), ""},
		{"a tracestate", tracestate("vendor=a, other=b"), "vendor=a, other=b"},
		{"a tracestate with a control byte", tracestate("a=b\r\nGarm-Invocation: x"), ""},
		{"an oversized tracestate", tracestate(strings.Repeat("a", maxTracestate+1)), ""},
		{"a correlation id", correlationID("order-7/step-2", "ev"), "order-7/step-2"},
		{"a correlation id with a space", correlationID("a b", "ev"), "ev"},
		{"no correlation id", correlationID("", "ev"), "ev"},
		{"an oversized correlation id", correlationID(strings.Repeat("c", maxCorrelationID+1), "ev"), "ev"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: %q, want %q", c.name, c.got, c.want)
		}
	}
}
