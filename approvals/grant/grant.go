package grant

import (
	"crypto/rand"
	"encoding/hex"
	"slices"
	"time"
)

// Approver is the person who approved: their subject and the clearance and compartments their
// identity provider vouched for when they approved.
type Approver struct {
	Subject      string
	Clearance    string
	Compartments []string
}

// Approval is what was approved.
type Approval struct {
	// Tool is the FQN of the tool the grant is for.
	Tool string
	// Subject is the sub of the caller who will present the grant.
	Subject string
	// Tenant is the caller's tenant; empty binds none (the dev identity provider's grants).
	Tenant string
	// Act is the caller's delegation chain, outermost actor first; nil binds none, an empty
	// non-nil list binds a call made directly.
	Act []string
	// Task optionally names the task the approval belongs to.
	Task string
	// MaterialDigest is wire.MaterialDigest of the texts the approver saw; empty when the tool
	// declares no material fields.
	MaterialDigest string
}

// Claim is the garm_grant claim. approver_compartments is always present, sorted. tenant and act,
// when present, bind the caller's tenant and delegation chain (an empty act: a direct call), and
// garmd refuses a call whose own differ.
type Claim struct {
	Tool                 string    `json:"tool"`
	Subject              string    `json:"subject"`
	Tenant               string    `json:"tenant,omitempty"`
	Act                  *[]string `json:"act,omitempty"`
	Task                 string    `json:"task,omitempty"`
	Material             string    `json:"material,omitempty"`
	Approver             string    `json:"approver"`
	ApproverClearance    string    `json:"approver_clearance"`
	ApproverCompartments []string  `json:"approver_compartments"`
}

// Claims is a grant's whole payload: iss, aud (one string), jti, iat, exp and garm_grant. It
// has no sub and no act.
type Claims struct {
	Issuer   string `json:"iss"`
	Audience string `json:"aud"`
	ID       string `json:"jti"`
	IssuedAt int64  `json:"iat"`
	Expiry   int64  `json:"exp"`
	Grant    Claim  `json:"garm_grant"`
}

// NewClaims is the payload of a grant issued now by issuer for audience, living ttl, with a
// fresh jti of 128 random bits in hex. Times are whole seconds.
func NewClaims(issuer, audience string, now time.Time, ttl time.Duration, a Approval, by Approver) Claims {
	var jti [16]byte
	rand.Read(jti[:]) // never fails: crypto/rand crashes the program rather than return an error
	now = now.Truncate(time.Second)
	compartments := slices.Clone(by.Compartments)
	if compartments == nil {
		compartments = []string{}
	}
	slices.Sort(compartments)
	var act *[]string
	if a.Act != nil {
		chain := append([]string{}, a.Act...)
		act = &chain
	}
	return Claims{
		Issuer:   issuer,
		Audience: audience,
		ID:       hex.EncodeToString(jti[:]),
		IssuedAt: now.Unix(),
		Expiry:   now.Add(ttl).Unix(),
		Grant: Claim{
			Tool:                 a.Tool,
			Subject:              a.Subject,
			Tenant:               a.Tenant,
			Act:                  act,
			Task:                 a.Task,
			Material:             a.MaterialDigest,
			Approver:             by.Subject,
			ApproverClearance:    by.Clearance,
			ApproverCompartments: compartments,
		},
	}
}
