// Package approval is garmd's side of the approvals service: the desk where
// a call refused for want of an approval grant leaves a request for a human
// (approvals/pending), and where the same caller comes back with the
// request's id to collect the grant the human's decision carries.
//
// It owns three answers, each for one caller: Ask records (or reuses) the
// open request of a call to a MODE_GRANT tool that presented no grant and
// says where a human decides it; Redeem turns the id of an approved request
// into the grant to verify, exactly as if the caller had sent it as
// Garm-Grant; Recall finds the decided request of the same call by the
// same caller for a retry that presents no id (decision 0113); Status says
// where a request stands. A bucket that does not answer is *Unavailable,
// which the chain answers 503, never a refusal without a link. A request is the caller's
// only when its tenant, subject and act chain are exactly the caller's: any
// other caller's id, an id that is malformed, missing or expired, answers
// as missing, so an id found or guessed tells nobody else anything.
//
// [Open] binds the bucket at garmd's start and refuses one that could be
// emptied by a single publish — not fenced against purges and roll-ups —
// or that could not expire requests, printing the command that fixes it;
// garmd creates and changes no bucket.
//
// It judges nothing. The grant a decision carries is checked and spent by
// step 5 (chain/grant) like any other — issuer, audience, tool, subject,
// approver, material digest, age, once across replicas — so a decision the
// approvals service got wrong, or a request whose material changed since it
// was asked, is refused there. A request records what was asked for a human
// to read; it is never a credential.
package approval
