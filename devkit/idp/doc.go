// Package idp is the dev identity provider (design 8): it issues ES256 tokens and approval grants
// for the personas of a YAML file, serves the key that verifies them, and serves the file itself,
// so a developer can call garmd as a support agent, an analyst or an agent acting for one, and
// approve a call as one of them, without a real IdP.
//
// It owns the persona file and its validation ([ParsePersonas], [Personas.Validate]: every
// problem reported at once), the fold of a persona's roles into one garm claim, the signing key,
// and the HTTP surface of [IdP.Handler]:
//
//   - GET [JWKSPath]: the public key only, with its kid, alg ES256 and use sig.
//   - GET [TokenPath]?user=<handle>[&as=<agent>][&exec=<runner subject>]: the compact JWT as
//     text/plain ([IdP.Token], [IdP.TokenWithExec]).
//   - POST [GrantPath] with a JSON [GrantRequest] ({"approver", "tool", "subject", "material",
//     "task"}, no other key, at most [MaxGrantBody] bytes): the compact grant JWS as text/plain
//     ([IdP.Grant]).
//   - GET [PersonasPath]: the canonical persona file as JSON; it reads back with [ParsePersonas].
//
// A started [Server] also speaks the minimum of OpenID Connect the approvals service signs people
// in with (decision 0057): GET [DiscoveryPath]; GET [AuthorizePath], a persona picker listing user
// personas only, whose POST redirects to the client's exactly registered redirect URI
// ([IdP.RegisterClient]) with a code and the state; and POST [OIDCTokenPath], which spends the
// code once — unexpired, from the client it was issued to, with the same redirect URI and the
// verifier of its PKCE S256 challenge — and answers an ID token with the persona's tenant and
// garm claim. PKCE plain, a missing state, an unregistered redirect URI and an agent persona are
// refused; a client error is never redirected.
//
// A token carries iss, sub, aud (one string), iat, nbf, exp, jti, tenant and the garm claim
// (clearance, compartments, verbs, tool_sets when scoped, kind, and attrs when the persona
// declares any), spelt with the prefixed enum names garmd accepts. With as, it carries an
// RFC 8693 act claim holding the agent's subject and the agent's own garm claim, its own attrs
// included: the agent's authority and attributes are never merged into the user's, because
// garmd folds the levels and a hop may only narrow. With exec, it carries exec {sub, iss}.
//
// A persona's attrs are the facts instance rules read as principal.attrs.<name> (a customer id,
// the accounts a person may act on). The file gives each a value of one of the four attribute
// shapes — a non-empty string, an integer, a boolean, a list of non-empty strings — and the IdP
// issues them as written. It does not know the catalogue, so it does not check that a name is
// declared, of that type or within its bounds: garmd binds only what the serving catalogue
// declares, and a value it cannot bind is absent there, never a wider grant.
//
// A grant (design 7.9) carries iss, aud ([Options.GrantAudience]), jti (128 random bits, hex),
// iat, exp ([Options.GrantTTL]) and garm_grant: tool, subject, task when given, material when
// texts are given, the approver's subject, clearance and compartments (always present, sorted),
// the approver's roles folded as for a token. It never carries act: only a user persona
// approves, never an agent, and never for someone else. The material claim is
// [wire.MaterialDigest] of the texts the approver saw, the very function garmd recomputes it
// from the request with, so the IdP and garmd cannot spell a value differently. The texts are
// signed as given: the IdP does not know the tool's request and does not second-guess what was
// approved (a path must still be dotted proto field names).
//
// A persona's roles grant, so they fold by union: the highest clearance of any role, the union
// of compartments and of verbs, and the union of tool sets — except that a persona holding any
// role that names no tool sets is unscoped and its token has no tool_sets claim at all (an
// absent claim is garmd's "unscoped"; an empty one would reach nothing). Compartments and tool
// sets are sorted by name, verbs by their enum number.
//
// A started [Server] serves behind [loopback.Guard], as every listener of the dev plane does: a
// page whose name rebinds to 127.0.0.1 cannot mint a persona's token, and a page on another origin
// cannot post the persona picker or a grant request.
//
// It refuses: a persona file with an unknown key, a misspelt clearance, verb or kind, an unknown
// role or may_act_for user, a persona with no clearance, a subject used twice, a handle that is
// both a user and an agent, or an attribute with a malformed name or a value of no attribute
// shape (null, a float, a map, an empty string, a list holding anything but non-empty strings); a token for an agent as the user, an actor that is a user, and an
// agent acting for a user it does not list (403); a grant approved by an agent or a persona not
// of kind USER, an unknown approver (404), a missing or unprintable tool or subject, and a body
// with an unknown or repeated key; and any listen address that is not loopback, checked on the
// address asked for and again on the address bound.
//
// A compartment a role names is not checked against a catalogue on load (the personas file
// outlives catalogues); [Personas.UndeclaredCompartments] lists those a given catalogue does not
// declare, with the declared name meant, and the dev plane logs them when it starts.
//
// Why it is shaped this way: the key is generated in [New] and lives only in memory, and the
// default issuer ([DefaultIssuer]) is a name that never resolves, so a token from this IdP can
// only be accepted by a garmd explicitly pointed at a running [Server]'s [Server.JWKSURL] — it
// cannot be mistaken for, or trusted as, a real identity. Signing goes through one method, so
// approval grants are issued with the same key and issuer as the tokens.
//
// This is development-only code: garmd never links it (an import rule checks that
// daemon/cmd/garmd does not reach devkit/), and nothing here is a model for production identity.
package idp
