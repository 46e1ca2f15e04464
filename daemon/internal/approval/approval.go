package approval

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/garm-dev/garm/approvals/pending"
	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// RequestsPath is the path under the approvals base URL where a request's
// page is: <base>/requests/<id>.
const RequestsPath = "/requests/"

// Store is what the desk needs of the pending-request bucket;
// *pending.Store is one.
type Store interface {
	Ask(ctx context.Context, r pending.Request) (pending.Request, error)
	Get(ctx context.Context, id string) (pending.Request, *pending.Decision, error)
	Lookup(ctx context.Context, id string) (pending.Request, *pending.Decision, error)
	Recall(ctx context.Context, r pending.Request) (pending.Request, *pending.Decision, error)
	Collected(ctx context.Context, r pending.Request) error
}

var _ Store = (*pending.Store)(nil)

// Desk records requests for approval and hands back decided grants.
type Desk struct {
	store Store
	base  string
}

// New is a desk over store whose requests are decided at baseURL (the
// approvals service's public URL, without a trailing slash).
func New(store Store, baseURL string) (*Desk, error) {
	if store == nil {
		return nil, errors.New("approval: no pending-request store")
	}
	if err := CheckBaseURL(baseURL); err != nil {
		return nil, err
	}
	return &Desk{store: store, base: strings.TrimRight(baseURL, "/")}, nil
}

// Open binds the approval-request bucket through js and is a desk over it
// whose requests are decided at baseURL: garmd's start. It refuses, with
// every problem and the command that fixes it, a bucket pending.Open
// refuses — one missing, not file-backed, without per-key TTLs, or not
// fenced against purges and roll-ups, which would let one publish empty
// it. garmd creates and changes no bucket.
func Open(ctx context.Context, js jetstream.JetStream, baseURL string) (*Desk, error) {
	if err := CheckBaseURL(baseURL); err != nil {
		return nil, err
	}
	store, err := pending.Open(ctx, js)
	if err != nil {
		return nil, err
	}
	return New(store, baseURL)
}

// CheckBaseURL accepts an absolute http(s) URL without query or fragment:
// where an approver's browser is sent.
func CheckBaseURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Host == "":
		return fmt.Errorf("approvals URL %q is not an absolute URL", raw)
	case u.Scheme != "https" && u.Scheme != "http":
		return fmt.Errorf("approvals URL %q is not an http(s) URL", raw)
	case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery || u.User != nil:
		return fmt.Errorf("approvals URL %q carries a query, a fragment or user information", raw)
	}
	return nil
}

// Ref is where a request is decided.
type Ref struct {
	ID  string `json:"id"`
	URL string `json:"url"`
}

// URL is the page of request id.
func (d *Desk) URL(id string) string { return d.base + RequestsPath + id }

// Asked is an open request as a surface needs it to send its caller to the
// human and back: where it is decided (Ref, the only part on the wire), and
// what it binds.
type Asked struct {
	Ref
	Tool           string
	MaterialDigest string
	Expires        time.Time
}

func (d *Desk) asked(r pending.Request) Asked {
	return Asked{Ref: Ref{ID: r.ID, URL: d.URL(r.ID)}, Tool: r.Tool, MaterialDigest: r.MaterialDigest, Expires: r.Expires}
}

// Unavailable is a request that could be neither found nor recorded
// because the bucket did not answer: the bus or its quorum is away, for
// now.
type Unavailable struct{ Err error }

func (u *Unavailable) Error() string {
	return "the approval-request bucket did not answer: " + u.Err.Error()
}
func (u *Unavailable) Unwrap() error { return u.Err }

// unavailable marks a store error that is not the store refusing the
// request itself (too many, invalid) as the bucket not answering.
func unavailable(err error) error {
	if err == nil || errors.Is(err, pending.ErrTooMany) || errors.Is(err, pending.ErrInvalid) || errors.Is(err, pending.ErrNotFound) {
		return err
	}
	return &Unavailable{Err: err}
}

// Recalled is the decided request a plain retry found: its grant when
// approved, or who denied it.
type Recalled struct {
	Asked
	Grant    string
	Denied   bool
	Approver string
}

// Recall finds the decided request the same caller p made for the same
// call to t with the same material (in), within the request's life (the
// grant's age): what a retry that presents no id is answered with. found
// is false when there is none, or it is still undecided — then Ask. An
// approved request is recalled once (pending.Store.Recall).
func (d *Desk) Recall(ctx context.Context, p *call.Principal, t *call.Tool, in protoreflect.Message) (rec Recalled, found bool, err error) {
	r, err := d.request(p, t, in)
	if err != nil {
		return Recalled{}, false, err
	}
	got, dec, err := d.store.Recall(ctx, r)
	switch {
	case errors.Is(err, pending.ErrNotFound):
		return Recalled{}, false, nil
	case err != nil:
		return Recalled{}, false, unavailable(err)
	case dec == nil:
		return Recalled{}, false, nil
	}
	return Recalled{Asked: d.asked(got), Grant: dec.Grant, Denied: dec.Verdict != pending.Approved, Approver: dec.Approver}, true, nil
}

// request is the pending request of p's call to t with input in.
func (d *Desk) request(p *call.Principal, t *call.Tool, in protoreflect.Message) (pending.Request, error) {
	a := t.Policy.GetApproval()
	texts, err := wire.MaterialTexts(in, a.GetMaterialFields())
	if err != nil {
		return pending.Request{}, fmt.Errorf("the material cannot be read: %w", err)
	}
	return pending.Request{
		Tool:                 t.FQN,
		ToolTitle:            t.Policy.GetTitle(),
		ToolDescription:      t.Policy.GetDescription(),
		ApprovalNotes:        a.GetNotes(),
		ApproverMinClearance: a.GetApproverMinClearance().String(),
		ApproverCompartments: a.GetApproverCompartments(),
		DistinctApprover:     a.GetDistinctApprover(),
		MaxGrantAgeSeconds:   a.GetMaxGrantAgeSeconds(),
		Subject:              p.Subject,
		Act:                  actors(p),
		Tenant:               p.Tenant,
		Material:             texts,
		MaterialDigest:       wire.MaterialDigest(texts),
	}, nil
}

// Ask records the request of the call eventID by p to t with input in, or
// finds the open one the same caller made for the same material, and says
// where it is decided. A bucket that does not answer is *Unavailable.
func (d *Desk) Ask(ctx context.Context, p *call.Principal, t *call.Tool, in protoreflect.Message, eventID string) (Asked, error) {
	r, err := d.request(p, t, in)
	if err != nil {
		return Asked{}, err
	}
	r.EventID = eventID
	r, err = d.store.Ask(ctx, r)
	if err != nil {
		return Asked{}, unavailable(err)
	}
	return d.asked(r), nil
}

// Outcome is why Redeem gave no grant.
type Outcome int

const (
	// Unknown: no request of this caller for this tool has the id — or it
	// expired, or was denied. One answer, so another caller's id tells
	// nothing.
	Unknown Outcome = iota + 1
	// Undecided: the caller's request is waiting for a human.
	Undecided
)

// Refusal is Redeem's answer when it has no grant; Detail is for the
// ledger only. Asked is the request still waiting, for Undecided.
type Refusal struct {
	Outcome Outcome
	Detail  string
	Asked   Asked
}

func (r *Refusal) Error() string { return r.Detail }

// Redeem is the grant of p's approved request id for t, and the request:
// a *Refusal when there is none for this caller, another error when the
// store cannot be read.
func (d *Desk) Redeem(ctx context.Context, id string, p *call.Principal, t *call.Tool) (string, Asked, error) {
	if !pending.ValidID(id) {
		return "", Asked{}, &Refusal{Outcome: Unknown, Detail: "the approval id is malformed"}
	}
	r, dec, err := d.store.Get(ctx, id)
	switch {
	case errors.Is(err, pending.ErrNotFound):
		return "", Asked{}, &Refusal{Outcome: Unknown, Detail: "approval request " + id + " is missing or expired"}
	case err != nil:
		return "", Asked{}, err
	case !owns(r, p):
		return "", Asked{}, &Refusal{Outcome: Unknown, Detail: "approval request " + id + " is another caller's"}
	case r.Tool != t.FQN:
		return "", Asked{}, &Refusal{Outcome: Unknown, Detail: "approval request " + id + " is for another tool"}
	case dec == nil:
		return "", Asked{}, &Refusal{Outcome: Undecided, Detail: "approval request " + id + " is not decided yet", Asked: d.asked(r)}
	case dec.Verdict != pending.Approved:
		return "", Asked{}, &Refusal{Outcome: Unknown, Detail: "approval request " + id + " was denied by " + dec.Approver}
	}
	// Collected by id: a bare call after this one asks anew (decision 0113). Best effort: a
	// key left in place costs that call a refusal of the spent grant, never a wrong grant.
	_ = d.store.Collected(ctx, r)
	return dec.Grant, d.asked(r), nil
}

// Status is where p's request id stands at now, never with its grant:
// pending.ErrNotFound for a malformed, missing or forgotten id and for
// another caller's.
func (d *Desk) Status(ctx context.Context, id string, p *call.Principal, now time.Time) (pending.Status, error) {
	if !pending.ValidID(id) {
		return "", pending.ErrNotFound
	}
	r, dec, err := d.store.Lookup(ctx, id)
	if err != nil {
		return "", err
	}
	if !owns(r, p) {
		return "", pending.ErrNotFound
	}
	return r.Status(dec, now), nil
}

// owns reports whether r was asked by exactly the caller p.
func owns(r pending.Request, p *call.Principal) bool {
	return r.Tenant == p.Tenant && r.Subject == p.Subject && slices.Equal(r.Act, actors(p))
}

func actors(p *call.Principal) []string {
	out := make([]string, len(p.Act))
	for i, a := range p.Act {
		out[i] = a.Subject
	}
	return out
}
