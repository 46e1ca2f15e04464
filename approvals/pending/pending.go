package pending

import (
	"crypto/rand"
	"encoding/base32"
	"errors"
	"slices"
	"time"

	"github.com/garm-dev/garm/runtime/wire"
)

// Bucket is the key-value bucket of approval requests and decisions.
const Bucket = wire.ApprovalsBucket

// ExpiredKept is how long a request stays in the bucket after it expired, so
// that its caller asking after it hears "expired" rather than "missing". Its
// decision is gone by then, and Get answers [ErrNotFound] for it.
const ExpiredKept = 15 * time.Minute

// MaxRequestsPerCaller bounds the requests one caller (tenant, subject and
// act chain) has in the bucket at once, decided or not, until each expires
// with its grant age: a caller that asks for ever new material cannot fill
// the bucket or an approver's inbox. Asking again for the same material
// reuses the open request and counts nothing.
const MaxRequestsPerCaller = 32

var (
	// ErrNotFound is a request that is missing, expired, or named by an id
	// that is not valid.
	ErrNotFound = errors.New("pending: no such approval request")
	// ErrDecided is a decision on a request that already has one.
	ErrDecided = errors.New("pending: the approval request is already decided")
	// ErrInvalid is a request or decision that this package refuses to
	// record; the error wrapping it says why.
	ErrInvalid = errors.New("pending: invalid approval record")
	// ErrTooMany is a new request from a caller who already has
	// MaxRequestsPerCaller in the bucket.
	ErrTooMany = errors.New("pending: the caller has too many approval requests")
)

// Request is one call waiting for a human's decision.
type Request struct {
	// ID is 128 random bits in lowercase base32 without padding: see NewID.
	ID string `json:"id"`
	// Tool is the tool's fully qualified name.
	Tool                 string   `json:"tool"`
	ToolTitle            string   `json:"tool_title"`
	ToolDescription      string   `json:"tool_description"`
	ApprovalNotes        string   `json:"approval_notes"` // the tool's approval notes as declared (empty if none)
	ApproverMinClearance string   `json:"approver_min_clearance"`
	ApproverCompartments []string `json:"approver_compartments"` // sorted, never null
	DistinctApprover     bool     `json:"distinct_approver"`
	MaxGrantAgeSeconds   uint32   `json:"max_grant_age_seconds"`
	Subject              string   `json:"subject"`
	// Act is the actor subjects in the order of the caller's act chain,
	// never null.
	Act    []string `json:"act"`
	Tenant string   `json:"tenant"`
	// Material maps each material path to its canonical text
	// (wire.MaterialText), never null.
	Material map[string]string `json:"material"`
	// MaterialDigest is wire.MaterialDigest over Material: exactly what a
	// grant's material claim must be.
	MaterialDigest string `json:"material_digest"`
	// EventID is the event id of the refused call that asked.
	EventID string    `json:"event_id"`
	Created time.Time `json:"created"`
	// Expires is Created plus MaxGrantAgeSeconds.
	Expires time.Time `json:"expires"`
}

// Verdict is what an approver decided.
type Verdict string

const (
	Approved Verdict = "approved"
	Denied   Verdict = "denied"
)

// Decision is an approver's verdict on a request.
type Decision struct {
	ID       string  `json:"id"`
	Verdict  Verdict `json:"verdict"`
	Approver string  `json:"approver"` // the approver's subject
	// Grant is the compact JWS of the approval grant, only when approved.
	Grant   string    `json:"grant,omitempty"`
	Decided time.Time `json:"decided"`
}

// Status is where a request stands, as its caller may be told.
type Status string

const (
	StatusPending  Status = "pending"
	StatusApproved Status = "approved"
	StatusDenied   Status = "denied"
	StatusExpired  Status = "expired"
)

// Status is where r stands at now given its decision d (nil when
// undecided). An expired request is expired whatever was decided on it:
// a decision never outlives its request.
func (r Request) Status(d *Decision, now time.Time) Status {
	switch {
	case !now.Before(r.Expires):
		return StatusExpired
	case d == nil:
		return StatusPending
	case d.Verdict == Approved:
		return StatusApproved
	default:
		return StatusDenied
	}
}

// idBytes is the number of random bytes in an id.
const idBytes = 16

// idLen is the length of an id: 128 bits in base32 take 26 characters.
const idLen = 26

var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// NewID returns a fresh request id: 128 bits from crypto/rand in lowercase
// base32 without padding.
func NewID() (string, error) {
	var b [idBytes]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return idEncoding.EncodeToString(b[:]), nil
}

// ValidID reports whether id is exactly what NewID could have made: 26
// characters of [a-z2-7] whose unused trailing bits are zero, so one request
// has one spelling and no id can reach another key or a subject wildcard.
func ValidID(id string) bool {
	if len(id) != idLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			return false
		}
	}
	b, err := idEncoding.DecodeString(id)
	return err == nil && len(b) == idBytes && idEncoding.EncodeToString(b) == id
}

// normalised returns r with its lists sorted or copied and never null.
func (r Request) normalised() Request {
	r.ApproverCompartments = slices.Sorted(slices.Values(r.ApproverCompartments))
	if r.ApproverCompartments == nil {
		r.ApproverCompartments = []string{}
	}
	r.Act = append([]string{}, r.Act...)
	m := make(map[string]string, len(r.Material))
	for k, v := range r.Material {
		m[k] = v
	}
	r.Material = m
	return r
}
