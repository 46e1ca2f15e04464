package ledger

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/deny"
	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// App is the plane that writes garmd's rows.
const App = "garmd"

// NewEventID mints a call's event id: a UUIDv7 (time-ordered, 74 random
// bits), so ids sort by when the call arrived.
func NewEventID(now time.Time) string {
	var b [16]byte
	_, _ = rand.Read(b[6:])
	ms := uint64(now.UnixMilli())
	binary.BigEndian.PutUint16(b[0:2], uint16(ms>>32))
	binary.BigEndian.PutUint32(b[2:6], uint32(ms))
	b[6] = b[6]&0x0f | 0x70
	b[8] = b[8]&0x3f | 0x80
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:36], b[10:16])
	return string(out[:])
}

// openRow is a row and its time, allocated together: one allocation per
// call instead of two.
type openRow struct {
	e    ledgerv1.Event
	time timestamppb.Timestamp
}

// Open starts a call's row: denied until the call says otherwise, with the
// request path as the method, and as the tool until a tool is resolved.
func Open(eventID string, now time.Time, path, version string) *ledgerv1.Event {
	path = recordablePath(path)
	r := new(openRow)
	r.time.Seconds, r.time.Nanos = now.Unix(), int32(now.Nanosecond())
	e := &r.e
	e.EventId = eventID
	e.Time = &r.time
	e.App = App
	e.Outcome = "denied"
	e.Tool, e.Method = path, path
	e.DaemonVersion = version
	return e
}

// maxPath bounds the request path a row records: the path is the caller's
// to choose, and the ledger must not grow with it.
const maxPath = 256

// maxDetail bounds error_detail: a detail can grow with the request (every
// violation of a request with many elements), and a row must stay well
// inside what a ledger stream accepts in one message.
const maxDetail = 4 << 10

// recordablePath is the path as a row may hold it: the caller names it
// (over MCP, a tool name of its choosing), so its control characters are
// replaced as client_name's are.
func recordablePath(path string) string { return bounded(strings.Map(printable, path), maxPath) }

// bounded is s as a row may hold it: valid UTF-8 (a row must marshal), at
// most max bytes, cut on a rune boundary and marked when cut.
func bounded(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// maxClientName bounds client_name: the client chooses it.
const maxClientName = 128

// Surface fills the columns of how the call arrived: the surface, and the
// name the client declared for itself, bounded and with control characters
// replaced (attribution only: nothing decides on it).
func Surface(e *ledgerv1.Event, surface, clientName string) {
	e.Surface = surface
	e.ClientName = bounded(strings.Map(printable, clientName), maxClientName)
}

// printable keeps r unless it is a control character, which a row's reader
// might render; those become U+FFFD.
func printable(r rune) rune {
	if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029 {
		return '\uFFFD'
	}
	return r
}

// Principal fills the columns of who called.
func Principal(e *ledgerv1.Event, p *call.Principal) {
	e.Tenant = p.Tenant
	e.PrincipalSubject = p.Subject
	e.PrincipalActor = p.Agent()
	e.PrincipalKind = p.Kind.String()
	e.ChainDepth = uint32(p.Depth())
	e.ClearanceEffective = p.Clearance.String()
	e.CompartmentsEffective = p.CompartmentNames
	e.ExecutionSubject = p.ExecutionSubject
}

// Tool fills the column of what was called: the FQN once resolved (the
// method column keeps the route).
func Tool(e *ledgerv1.Event, t *call.Tool) { e.Tool = t.FQN }

// Finish completes the row with how the call ended.
func Finish(e *ledgerv1.Event, err error, latency time.Duration) {
	e.Outcome = deny.Outcome(err)
	kind, detail := deny.Detail(err)
	// A detail can quote what the caller sent; a reader of the row or of
	// a log line holding it must not be steered by it.
	e.ErrorKind, e.ErrorDetail = kind, bounded(strings.Map(printable, detail), maxDetail)
	e.LatencyMs = float64(latency.Nanoseconds()) / 1e6
}

// Instance fills the columns of what the instance rules decided (steps 4
// and 7): the id of the rule that refused or withheld, how many rows the
// filters removed and which filters removed any, what audit-only rules
// would have done ("<phase>:<id>"), and the class of a failed evaluation.
// Every value is static catalogue text or a closed-list class; none is
// ever a request's, an answer's or a token's value, nor the evaluator's
// text.
func Instance(e *ledgerv1.Event, rule string, rowsFiltered uint32, filtersApplied, auditOnly []string, errorClass string) {
	e.InstanceRule = rule
	e.RowsFiltered = rowsFiltered
	e.FiltersApplied = filtersApplied
	e.AuditOnlyVerdicts = auditOnly
	e.RuleErrorClass = errorClass
}

// Limit fills the columns of the limit that refused the call: its id and
// its key's parts ("tenant+subject"), never the key's values.
func Limit(e *ledgerv1.Event, id, key string) {
	e.LimitId, e.LimitKey = id, key
}
