package idp

import (
	"fmt"
	"regexp"
	"time"

	"github.com/garm-dev/garm/approvals/grant"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/runtime/wire"
)

// DefaultGrantTTL is how long a grant lives unless [Options.GrantTTL] says otherwise. garmd also
// refuses a grant older than the tool's max_grant_age_seconds, whichever is shorter.
const DefaultGrantTTL = 5 * time.Minute

// GrantRequest is what an approver approves: [IdP.Grant] and POST /grant take the same fields.
// Marshalled with encoding/json it is a valid POST /grant body.
type GrantRequest struct {
	// Approver is the handle of the user persona approving; an agent cannot approve.
	Approver string `json:"approver"`
	// Tool is the FQN of the tool the grant is for.
	Tool string `json:"tool"`
	// Subject is the sub of the caller who will present the grant.
	Subject string `json:"subject"`
	// Task optionally names the task the approval belongs to; garmd records it.
	Task string `json:"task"`
	// Material maps each material path of the tool to the canonical text the approver saw
	// ([wire.MaterialText]); the grant carries its [wire.MaterialDigest]. Empty when the tool
	// declares no material fields.
	Material map[string]string `json:"material"`
}

// materialPath is the grammar of a material path: dotted proto field names. A path outside it
// names no field garmd could read, so a grant over it could never be spent.
var materialPath = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)

// Grant issues an approval grant: the approver persona approves the subject calling the tool,
// with these material texts. It answers exactly what POST /grant answers. The grant is signed
// with the same key and issuer as the tokens; its aud is [IdP.GrantAudience] and it lives
// [Options.GrantTTL].
//
// It refuses an unknown approver ([ErrUnknownUser]); an approver that is an agent, or a user
// persona of a kind other than USER ([ErrNotAUser]), since only a person approves; and a
// missing approver, an empty or non-printable tool or subject, a non-printable task, or a
// material path that is not dotted proto field names ([ErrInvalidRequest]). Material texts are taken as given: the
// grant binds what the approver saw, and the literal [wire.Unset] approves an absent field.
func (i *IdP) Grant(r GrantRequest) (string, error) {
	approver, ok := i.users[r.Approver]
	switch {
	case r.Approver == "":
		return "", fmt.Errorf("%w: missing approver", ErrInvalidRequest)
	case !ok && i.isAgent(r.Approver):
		return "", fmt.Errorf("%w: %q is an agent, and an agent cannot approve", ErrNotAUser, r.Approver)
	case !ok:
		return "", fmt.Errorf("%w %q", ErrUnknownUser, r.Approver)
	case approver.garm.Kind != toolv1.PrincipalKind_PRINCIPAL_KIND_USER.String():
		return "", fmt.Errorf("%w: %q is of kind %s; only a user approves", ErrNotAUser, r.Approver, approver.garm.Kind)
	}
	if !isPrintable(r.Tool) {
		return "", fmt.Errorf("%w: tool must be a non-empty printable FQN", ErrInvalidRequest)
	}
	if !isPrintable(r.Subject) {
		return "", fmt.Errorf("%w: subject must be a non-empty printable subject", ErrInvalidRequest)
	}
	if r.Task != "" && !isPrintable(r.Task) {
		return "", fmt.Errorf("%w: task must be printable", ErrInvalidRequest)
	}
	for path := range r.Material {
		if !materialPath.MatchString(path) {
			return "", fmt.Errorf("%w: a material path is not dotted proto field names", ErrInvalidRequest)
		}
	}
	a := grant.Approval{Tool: r.Tool, Subject: r.Subject, Task: r.Task}
	if len(r.Material) > 0 {
		a.MaterialDigest = wire.MaterialDigest(r.Material)
	}
	by := grant.Approver{Subject: approver.subject, Clearance: approver.garm.Clearance, Compartments: approver.garm.Compartments}
	claims := grant.NewClaims(i.issuer, i.grantAudience, i.now(), i.grantTTL, a, by)
	return i.sign(claims)
}

// GrantAudience is the aud every grant carries; garmd is given it as its grant audience.
func (i *IdP) GrantAudience() string { return i.grantAudience }

func (i *IdP) isAgent(handle string) bool {
	_, ok := i.agents[handle]
	return ok
}
