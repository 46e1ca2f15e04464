package garmd_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// postRaw calls garmd with exactly the header fields given, repeated ones
// included, and a body.
func (s *stack) postRaw(path, body string, header http.Header) *answer {
	s.t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.url+path, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	return s.do(req)
}

// payHeaders are the headers of a well-formed payment: payer's token, JSON,
// the grant.
func (s *stack) payHeaders(grant string) http.Header {
	return http.Header{
		"Authorization": {"Bearer " + s.token("payer")},
		"Content-Type":  {"application/json"},
		"Garm-Grant":    {grant},
	}
}

// TestNothingRefusedAfterAGrantVerifiesCostsTheGrant walks every refusal a
// payment can meet once its grant has verified, and a few the caller's
// headers cause: each is refused, and the same grant then pays on the
// corrected call — step 5 spends it only as the last act before dispatch.
func TestNothingRefusedAfterAGrantVerifiesCostsTheGrant(t *testing.T) {
	t.Parallel()
	s := startGovernedStack(t)
	cases := []struct {
		name string
		// spoil makes the call go wrong: a header, the body, or the plane
		// around it; it returns what puts it right.
		spoil  func(h http.Header, body *string) (restore func())
		status int
		kind   string
	}{
		{"a Garm-Timeout-Ms that is not a number", func(h http.Header, _ *string) func() {
			h.Set("Garm-Timeout-Ms", "soon")
			return nil
		}, http.StatusBadRequest, ""},
		{"a Garm-Timeout-Ms of zero", func(h http.Header, _ *string) func() {
			h.Set("Garm-Timeout-Ms", "0")
			return nil
		}, http.StatusBadRequest, ""},
		{"a Garm-Timeout-Ms too long to read", func(h http.Header, _ *string) func() {
			h.Set("Garm-Timeout-Ms", "99999999999999")
			return nil
		}, http.StatusBadRequest, ""},
		{"the grant sent twice", func(h http.Header, _ *string) func() {
			h["Garm-Grant"] = append(h["Garm-Grant"], h["Garm-Grant"][0])
			return nil
		}, http.StatusBadRequest, ""},
		{"the token sent twice", func(h http.Header, _ *string) func() {
			h["Authorization"] = append(h["Authorization"], h["Authorization"][0])
			return nil
		}, http.StatusBadRequest, ""},
		{"Content-Type sent twice", func(h http.Header, _ *string) func() {
			h["Content-Type"] = append(h["Content-Type"], "application/json")
			return nil
		}, http.StatusBadRequest, ""},
		{"a Content-Type that is not JSON by its media type", func(h http.Header, _ *string) func() {
			h.Set("Content-Type", "application/jsonx")
			return nil
		}, http.StatusBadRequest, ""},
		{"a body that does not decode", func(_ http.Header, body *string) func() {
			*body = strings.Replace(*body, `"memo"`, `"memo_not_a_field"`, 1)
			return nil
		}, http.StatusBadRequest, ""},
		{"the audit stream is gone (write-ahead fails)", func(http.Header, *string) func() {
			ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
			defer cancel()
			if err := s.jetstream().DeleteStream(ctx, "GARM_AUDIT"); err != nil {
				t.Fatal(err)
			}
			return func() { createAuditStream(t, s.jetstream()) }
		}, http.StatusServiceUnavailable, "audit_unavailable"},
		// The row of this one goes to the log fallback, not the stream.
		{"the bus is away", func(http.Header, *string) func() {
			s.bus.stop()
			return func() {
				s.bus.start(t)
				eventually(t, "garmd ready again", func() bool { status, _ := s.admin("/readyz"); return status == http.StatusOK })
				s.bus.waitServing(t, "appr.v1.Payments.Pay")
			}
		}, http.StatusServiceUnavailable, ""},
	}
	paid := s.payments.paid.Load()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := s.grant("approver", "appr.v1.pay", payer, paymentMaterial, "")
			h, body := s.payHeaders(g), payment
			restore := c.spoil(h, &body)
			refused := s.postRaw(payPath, body, h)
			if refused.status != c.status {
				t.Fatalf("the spoilt call answered %d %s, want %d", refused.status, refused.body, c.status)
			}
			if restore != nil {
				restore()
			}
			if c.kind != "" {
				if row := s.row(refused.eventID()); row.GetErrorKind() != c.kind {
					t.Errorf("the refusal's row says %q, want %q", row.GetErrorKind(), c.kind)
				}
			}
			ok := s.postRaw(payPath, payment, s.payHeaders(g))
			if ok.status != http.StatusOK {
				t.Fatalf("the same grant on the corrected call: %d %s", ok.status, ok.body)
			}
			paid++
			if n := s.payments.paid.Load(); n != paid {
				t.Fatalf("the tool paid %d times, want %d", n, paid)
			}
		})
	}
}
