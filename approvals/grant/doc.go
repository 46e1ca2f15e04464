// Package grant is the payload of an approval grant (design 7.9): the claims garmd's step 5
// checks, built one way for every issuer. The approvals service mints its grants with it, and so
// does the dev identity provider's POST /grant, so the two cannot drift apart on a claim's name,
// its presence or its type (decision 0055).
//
// It builds claims; it does not sign them. Each issuer signs with its own key through its own
// signer, and garmd verifies with that issuer's key set. It deliberately has no top-level act
// claim: a delegated identity cannot approve, and garmd refuses a grant that carries one. Inside
// garm_grant, tenant and act bind the approved caller's tenant and delegation chain, so a grant
// approved for one call cannot serve the same subject in another tenant or through another agent;
// the approvals service always binds both (decision 0084).
package grant
