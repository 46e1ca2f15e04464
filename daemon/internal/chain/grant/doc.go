// Package grant is chain step 5: it checks the approval grant a call to a
// MODE_GRANT tool presents in Garm-Grant, and spends it (design 7.4, 7.9).
//
// It owns the grant's claims and what they must say about this call: the
// exact grant issuer and its audience; a jti; exp, nbf and iat with the
// skew, and an age within the tool's max_grant_age_seconds — the tool's
// ceiling, which nothing in the grant can raise; no act claim, because a
// delegated identity cannot approve; and garm_grant binding the grant to
// this tool, this caller's subject (and, when the grant names them, this
// caller's tenant and exact delegation chain, which the approvals service
// always binds), an approver whose clearance and
// compartments the tool asks of approvers, and, when the tool declares
// material_fields, the digest of exactly the values the approver saw
// (wire.RequestMaterialDigest, recomputed from the request). Check decides
// all of that and spends nothing; Spend spends a grant that passed, through
// the replay port, once across every replica. The chain calls Spend as its
// last act before dispatch, so that nothing refused afterwards — a header,
// the deadline, the audit write-ahead, the bus — can burn a human's
// single-use approval.
//
// What it refuses: an absent grant with deny.GrantRequired, whose wire
// body tells the caller what a grant for this tool must bind; and with one
// and the same deny.PermissionDenied, whatever the reason, a grant over
// MaxGrantBytes (before it is parsed), anything keyset refuses (not
// compact, no kid, an algorithm off the allowlist, a key the grant issuer
// did not publish, a bad signature), any claim above that is missing,
// malformed or wrong, a grant spent before, and a grant whose spending
// cannot be recorded (fail closed). The refusal's detail names the check
// for the ledger and at most the grant's jti; never a value of the request
// nor the grant itself.
//
// Why: a MODE_GRANT tool does what an agent must not do on its own say-so.
// The grant is a human's signed yes to one call, and each check closes one
// way to stretch that yes to another call — another tool, another caller,
// other values, a later time, a second use, or an approver who could not
// have approved it.
//
// Signatures and keys are keyset's, exactly as for tokens (design 7.5);
// whether a grant was used before is the replay port's. garm_grant.task is
// returned for the ledger whether or not the grant verified. Deliberately
// not here: issuing grants, asking a human, revoking a grant before it is
// spent, and deciding which tools need one (the catalogue's declaration,
// read by the chain).
package grant
