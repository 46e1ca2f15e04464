package deny

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Code is why a call ended without the tool's answer. Several codes share a
// wire spelling (413 and 400 are both invalid_argument) and differ in status
// or message.
type Code uint8

// The codes, one per row of design 7.3's status table.
const (
	Internal Code = iota
	MethodNotAllowed
	BodyTooLarge
	NoCatalogue
	Unauthenticated
	NotFound
	InvalidArgument
	PermissionDenied
	GrantRequired
	AuditUnavailable
	ToolUnavailable
	DeadlineExceeded
	ToolRefused
	MalformedHeaders
	Overloaded
	ShuttingDown
	BodyTimeout
	// ApprovalRefused is a Garm-Approval that names no approved request of
	// the caller's: missing, another caller's, denied or expired, alike.
	ApprovalRefused
	// ApprovalNotFound is GET /approvals/<id> for no request of the
	// caller's.
	ApprovalNotFound
	// RateLimited is a call over one of its tool's limits (429).
	RateLimited
	// LimitUnavailable is a call whose limit could not be counted within
	// its bound: refused, fail closed (503).
	LimitUnavailable
	codeCount
)

// Codes is every code, in order: a table that must cover each (the
// one-row-per-terminal-path test) ranges over it, so a new code cannot be
// missed.
func Codes() []Code {
	out := make([]Code, codeCount)
	for c := range out {
		out[c] = Code(c)
	}
	return out
}

// Name is the code's identifier as this package declares it
// ("GrantRequired"): unlike String, one per code.
func (c Code) Name() string {
	if c >= codeCount || names[c] == "" {
		return "Code(" + strconv.Itoa(int(c)) + ")"
	}
	return names[c]
}

var names = [codeCount]string{
	Internal: "Internal", MethodNotAllowed: "MethodNotAllowed", BodyTooLarge: "BodyTooLarge",
	NoCatalogue: "NoCatalogue", Unauthenticated: "Unauthenticated", NotFound: "NotFound",
	InvalidArgument: "InvalidArgument", PermissionDenied: "PermissionDenied", GrantRequired: "GrantRequired",
	AuditUnavailable: "AuditUnavailable", ToolUnavailable: "ToolUnavailable", DeadlineExceeded: "DeadlineExceeded",
	ToolRefused: "ToolRefused", MalformedHeaders: "MalformedHeaders", Overloaded: "Overloaded",
	ShuttingDown: "ShuttingDown", BodyTimeout: "BodyTimeout", ApprovalRefused: "ApprovalRefused",
	ApprovalNotFound: "ApprovalNotFound", RateLimited: "RateLimited", LimitUnavailable: "LimitUnavailable",
}

type entry struct {
	wire    string
	status  int
	message string
}

var table = [codeCount]entry{
	Internal:         {"internal", http.StatusInternalServerError, "The call failed inside garm."},
	MethodNotAllowed: {"unimplemented", http.StatusMethodNotAllowed, "Only POST is served here."},
	BodyTooLarge:     {"invalid_argument", http.StatusRequestEntityTooLarge, "The request body is larger than garm accepts."},
	NoCatalogue:      {"unavailable", http.StatusServiceUnavailable, "No catalogue is being served yet."},
	Unauthenticated:  {"unauthenticated", http.StatusUnauthorized, "A valid bearer token is required."},
	NotFound:         {"not_found", http.StatusNotFound, "No such tool."},
	InvalidArgument:  {"invalid_argument", http.StatusBadRequest, "The request does not match the tool's input."},
	PermissionDenied: {"permission_denied", http.StatusForbidden, "The caller may not make this request."},
	GrantRequired:    {"grant_required", http.StatusForbidden, "This call needs a human's approval grant."},
	AuditUnavailable: {"unavailable", http.StatusServiceUnavailable, "The call could not be recorded before it ran, so it was not made."},
	ToolUnavailable:  {"unavailable", http.StatusServiceUnavailable, "The tool is not available right now."},
	DeadlineExceeded: {"deadline_exceeded", http.StatusGatewayTimeout, "The tool did not answer in time."},
	ToolRefused:      {"tool_refused", 0, ""},
	MalformedHeaders: {"invalid_argument", http.StatusBadRequest, "A header garm reads was sent more than once or is malformed."},
	Overloaded:       {"unavailable", http.StatusServiceUnavailable, "garm has as many calls in flight as it takes; retry shortly."},
	ShuttingDown:     {"unavailable", http.StatusServiceUnavailable, "garm is shutting down; retry shortly."},
	BodyTimeout:      {"invalid_argument", http.StatusRequestTimeout, "The request body did not arrive in time."},
	ApprovalRefused:  {"permission_denied", http.StatusForbidden, "No approved request of the caller's has this id: it is missing, was denied or has expired."},
	ApprovalNotFound: {"not_found", http.StatusNotFound, "No such approval request."},
	RateLimited:      {"rate_limited", http.StatusTooManyRequests, "The call is over one of the tool's limits; retry after the time given."},
	LimitUnavailable: {"unavailable", http.StatusServiceUnavailable, "The call's limits could not be counted, so it was not made; retry shortly."},
}

// toolRefusals is the static sentence for each of the tool's own refusal
// codes (runtime/wire.RefusalCodes); the tool's words never reach the caller.
var toolRefusals = map[string]string{
	"400": "The tool refused the request as invalid.",
	"403": "The tool refused the request.",
	"404": "The tool found nothing for this request.",
	"409": "The tool refused the request: it conflicts with the current state.",
	"415": "The tool refused the request's content.",
	"422": "The tool could not process the request.",
	"429": "The tool is overloaded; try again later.",
	"502": "The tool's own upstream failed.",
	"504": "The tool's own upstream did not answer in time.",
}

// String is the code's wire spelling.
func (c Code) String() string {
	if c >= codeCount {
		return table[Internal].wire
	}
	return table[c].wire
}

// Status is the HTTP status a code answers with. ToolRefused has none of
// its own: see Failed.Status.
func (c Code) Status() int {
	if c >= codeCount || c == ToolRefused {
		return http.StatusInternalServerError
	}
	return table[c].status
}

// Message is the code's static sentence.
func (c Code) Message() string {
	if c >= codeCount {
		return table[Internal].message
	}
	return table[c].message
}

// Denied is a refusal that is the caller's fault: its token, its route, its
// body, its rights. Detail goes to the ledger only; Extra adds keys to the
// wire body (design 7.3's "extra" column) and holds nothing the caller did not
// already know or is not meant to learn.
type Denied struct {
	Code   Code
	Detail string
	Extra  map[string]any
	// Limit is set on a RateLimited refusal: what its rate-limit header
	// fields say.
	Limit *LimitAnswer
}

// LimitAnswer is what a RateLimited refusal tells the caller beside its
// body: the limit's count, what is left of it (0) and when it resets.
type LimitAnswer struct {
	Count      uint32
	Remaining  uint32
	RetryAfter time.Duration
}

// RetryAfterSeconds is RetryAfter rounded up to whole seconds, at least 1.
func (a *LimitAnswer) RetryAfterSeconds() int64 {
	return max(int64((a.RetryAfter+time.Second-1)/time.Second), 1)
}

func (d *Denied) Error() string { return d.Code.String() + ": " + d.Detail }

// Deny is a Denied with a detail for the ledger.
func Deny(code Code, detail string) *Denied { return &Denied{Code: code, Detail: detail} }

// Failed is a call that could not complete: no service answered, the tool
// timed out or refused, or garmd failed. Kind is the ledger's error_kind.
type Failed struct {
	Code   Code
	Kind   string
	Detail string
	// ToolCode is the tool's own refusal code, for ToolRefused.
	ToolCode string
}

func (f *Failed) Error() string {
	if f.ToolCode != "" {
		return f.Code.String() + " " + f.ToolCode + ": " + f.Detail
	}
	return f.Code.String() + ": " + f.Detail
}

// Status is the HTTP status of the failure: the tool's own code for a tool
// refusal among the codes passed through, else the code's.
func (f *Failed) Status() int {
	if f.Code == ToolRefused {
		if _, ok := toolRefusals[f.ToolCode]; ok {
			n, _ := strconv.Atoi(f.ToolCode)
			return n
		}
		return http.StatusInternalServerError
	}
	return f.Code.Status()
}

// Fail is a Failed with an error kind and a detail for the ledger.
func Fail(code Code, kind, detail string) *Failed {
	return &Failed{Code: code, Kind: kind, Detail: detail}
}

// Refuse is the tool's own refusal with one of the codes passed through.
func Refuse(toolCode, detail string) *Failed {
	return &Failed{Code: ToolRefused, Kind: "tool_refused", Detail: detail, ToolCode: toolCode}
}

// Misconfigured is a problem caught at boot (or when a catalogue is
// pre-flighted): every problem found, not just the first.
type Misconfigured struct{ Problems []string }

func (m *Misconfigured) Error() string {
	return strings.Join(m.Problems, "; ")
}

// Outcome is the ledger's outcome for a call that ended with err: "ok" for
// nil, "denied" for Denied, "error" for anything else.
func Outcome(err error) string {
	if err == nil {
		return "ok"
	}
	if d := (*Denied)(nil); errors.As(err, &d) {
		return "denied"
	}
	return "error"
}

// Detail is what err puts in the ledger's error_detail and error_kind.
func Detail(err error) (kind, detail string) {
	if err == nil {
		return "", ""
	}
	if d := (*Denied)(nil); errors.As(err, &d) {
		return "", d.Detail
	}
	if f := (*Failed)(nil); errors.As(err, &f) {
		return f.Kind, f.Detail
	}
	return "internal", err.Error()
}

// staticBodies holds the body of every code without extras, built once.
var staticBodies = func() [codeCount][]byte {
	var out [codeCount][]byte
	for c := Code(0); c < codeCount; c++ {
		if c != ToolRefused {
			out[c] = mustBody(map[string]any{"code": c.String(), "message": c.Message()})
		}
	}
	return out
}()

var toolRefusalBodies = func() map[string][]byte {
	out := make(map[string][]byte, len(toolRefusals))
	for code, msg := range toolRefusals {
		out[code] = mustBody(map[string]any{"code": ToolRefused.String(), "message": msg, "tool_code": code})
	}
	return out
}()

// Wire is the one mapping from a call's end to what the caller sees: the
// status and the JSON body. Anything that is neither Denied nor Failed is an
// internal failure.
func Wire(err error) (status int, body []byte) {
	if d := (*Denied)(nil); errors.As(err, &d) {
		if len(d.Extra) == 0 {
			return d.Code.Status(), staticBodies[codeIndex(d.Code)]
		}
		m := make(map[string]any, len(d.Extra)+2)
		for k, v := range d.Extra {
			m[k] = v
		}
		m["code"], m["message"] = d.Code.String(), d.Code.Message()
		return d.Code.Status(), mustBody(m)
	}
	if f := (*Failed)(nil); errors.As(err, &f) {
		if f.Code == ToolRefused {
			if b, ok := toolRefusalBodies[f.ToolCode]; ok {
				return f.Status(), b
			}
			return table[Internal].status, staticBodies[Internal]
		}
		return f.Code.Status(), staticBodies[codeIndex(f.Code)]
	}
	return table[Internal].status, staticBodies[Internal]
}

func codeIndex(c Code) Code {
	if c >= codeCount || c == ToolRefused {
		return Internal
	}
	return c
}

func mustBody(m map[string]any) []byte {
	b, err := json.Marshal(m)
	if err != nil {
		panic("deny: a body did not marshal: " + err.Error())
	}
	return b
}

// WireCode is the wire spelling of err's code: the code field of the body
// Wire writes for it.
func WireCode(err error) string {
	if d := (*Denied)(nil); errors.As(err, &d) {
		return d.Code.String()
	}
	if f := (*Failed)(nil); errors.As(err, &f) {
		if f.Code == ToolRefused {
			if _, ok := toolRefusals[f.ToolCode]; ok {
				return ToolRefused.String()
			}
			return Internal.String()
		}
		return f.Code.String()
	}
	return Internal.String()
}

// DenyRule is step 4's refusal by the instance rule id: 403
// permission_denied with the body member rule naming it. A rule's id is
// static catalogue text, listed to every caller who may see the tool, so
// naming it discloses nothing the caller could not read; the rule's
// expression and whatever it read stay in detail, for the ledger.
func DenyRule(rule, detail string) *Denied {
	return &Denied{Code: PermissionDenied, Detail: detail, Extra: map[string]any{"rule": rule}}
}

// RateLimit is a call refused by the limit id (429 rate_limited), whose
// window admits count and resets after retryAfter. The body names the limit
// and when to retry: a limit's id is static catalogue text, listed to the
// callers it applies to; detail is for the ledger.
func RateLimit(id string, count uint32, retryAfter time.Duration, detail string) *Denied {
	a := &LimitAnswer{Count: count, RetryAfter: retryAfter}
	return &Denied{Code: RateLimited, Detail: detail, Limit: a,
		Extra: map[string]any{"limit": id, "retry_after_seconds": a.RetryAfterSeconds()}}
}
