// Package approvals is the approvals service: the human half of MODE_GRANT (design 7.9). When garmd
// refuses a call with grant_required it records a pending request (package pending) and sends
// the caller to the request's page here; an approver signs in, sees exactly what the call would
// do, and approves or denies it. An approval is a grant over the request's material digest,
// signed with the service's own key, which garmd verifies with the key set served at [JWKSPath]
// and spends once.
//
// It owns: sign-in (OpenID Connect authorization code with PKCE S256, the ID token verified for
// issuer, audience, expiry, signature and nonce; the sign-in under way sealed into the browser's
// cookie, so the server holds nothing per /login), the approver's garm subject (the ID-token
// claim [Config.SubjectClaim] names, nothing else), server-side sessions (a random id in an
// HttpOnly, SameSite=Strict cookie, Secure under TLS, bounded per approver and in all, never
// outliving the ID token, and never ended to make room for another approver's), the inbox (one
// tenant's requests, filtered before they are bounded, in pages), a request's page (hidden
// characters of the material shown as escapes, their rows marked; an amount in minor units also
// read in its currency's units beside the raw value), the feed of recent notified actions
// (GARM_NOTIFY's rows, filtered as the inbox is: [MayWatch]), the decision, the grant's
// signature (binding the request's tool, subject, tenant, act chain and material) and the audit
// row of every decision. Every form carries a CSRF token bound to the session, signing out
// included; every answer carries a Content-Security-Policy that allows no script at all, and
// refuses framing, referrers and caching.
//
// It refuses: a sign-in not begun by the same browser or older than its bound, an ID token
// without the subject claim, a delegated identity (an ID token with act), a non-user kind, a
// token without a known clearance; a sign-in when every session is taken; a decision or a
// sign-out without a live session or without the session's CSRF token; a bucket that is not
// fenced against purges and roll-ups (at start); and any request the approver may not decide ([MayDecide]:
// tenant, clearance by garmd's own lattice, every approver compartment, and four eyes when the
// tool declares distinct_approver). A request the approver may not decide answers exactly what a
// missing one answers, so the service never reveals that it exists.
//
// Deciding writes the audit row to GARM_AUDIT first and stores the decision only once the stream
// acknowledged the row: a decision never exists without its row (decision 0058).
//
// Deliberately not here: recording requests, answering callers and spending grants are garmd's;
// the request record and its bucket are package pending's, shared with garmd; the grant payload
// is package grant's, shared with the dev identity provider. The service never holds garmd's
// keys, and garmd never holds the key that signs grants.
package approvals
