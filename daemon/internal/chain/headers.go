package chain

// Caller-asserted headers forwarded on the invocation are bounded and
// checked here; one that does not pass is dropped, never refused: they are
// attribution, and a malformed one must not make a call fail or smuggle
// bytes to a tool.

// maxCorrelationID bounds Garm-Correlation-Id.
const maxCorrelationID = 128

// maxTracestate bounds tracestate (W3C allows 32 members of 256 bytes; a
// proxy may truncate, and garmd forwards at most this much whole or nothing).
const maxTracestate = 512

// correlationID is the caller's Garm-Correlation-Id when it is at most
// maxCorrelationID visible ASCII characters, else the event id.
func correlationID(header, eventID string) string {
	if header == "" || len(header) > maxCorrelationID || !visibleASCII(header) {
		return eventID
	}
	return header
}

// traceparent is the header when it is a W3C version-00 traceparent
// ("00-<32 hex>-<16 hex>-<2 hex>", lowercase), else "".
func traceparent(h string) string {
	if len(h) != 55 || h[0] != '0' || h[1] != '0' || h[2] != '-' || h[35] != '-' || h[52] != '-' {
		return ""
	}
	for i := 3; i < 55; i++ {
		if i == 35 || i == 52 {
			continue
		}
		if c := h[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return ""
		}
	}
	if h[3:35] == "00000000000000000000000000000000" || h[36:52] == "0000000000000000" {
		return ""
	}
	return h
}

// tracestate is the header when it is at most maxTracestate printable ASCII
// characters (spaces allowed), else "".
func tracestate(h string) string {
	if len(h) > maxTracestate {
		return ""
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; c < 0x20 || c > 0x7e {
			return ""
		}
	}
	return h
}

func visibleASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}
