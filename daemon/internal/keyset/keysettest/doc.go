// Package keysettest is a real JWKS endpoint and real signing keys for
// tests of keyset and of its callers (chain step 1's tokens and step 5's
// approval grants). Keys are generated when a test asks for them; none is ever
// committed.
//
// Signatures are made here with the standard library's crypto, not with the
// JOSE library keyset verifies with, so a test that passes shows two
// independent implementations agree. The package can also make what no
// honest signer would: unsigned tokens, HMAC tokens keyed with public key
// bytes, headers that point at other key sets. It refuses nothing; it is for
// tests only.
package keysettest
