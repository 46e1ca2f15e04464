package inspect

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/garm-dev/garm/catalogue-builder/signature"
)

// Signatures is what the envelope beside an artifact states and, when a
// key set was given, what of it verified (docs/decisions/0132).
type Signatures struct {
	Catalogue string `json:"catalogue"`
	// KeyIDs are the envelope's signatures' key ids, each once, in the
	// order they signed: what the envelope claims, verified or not.
	KeyIDs   []string `json:"key_ids"`
	SignedAt string   `json:"signed_at"`
	// SignedDigest is the artifact the statement signs; ThisArtifact says
	// whether it is the one inspected.
	SignedDigest string `json:"signed_digest"`
	// Signers are the distinct keys whose signatures verified, with their
	// groups; empty without a key set.
	Signers      []Signer `json:"signers"`
	ThisArtifact bool     `json:"this_artifact"`
	// UnknownKeyIDs are signatures' key ids the key set does not hold.
	UnknownKeyIDs []string `json:"unknown_key_ids"`
	// Verification is "not checked" (no key set), "verified", or
	// "refused: " and the reason (signature.Reason) and detail.
	Verification string `json:"verification"`
	Version      uint64 `json:"version"`
}

// Signer is one verified signer.
type Signer struct {
	Alg   string `json:"alg"`
	Group string `json:"group"`
	KeyID string `json:"key_id"`
}

// DescribeSignatures is the Signatures of an envelope over the artifact
// whose digest is artifactDigest, verified against keys when keys is not
// nil.
func DescribeSignatures(e *signature.Envelope, artifactDigest string, keys *signature.KeySet) *Signatures {
	st := e.Statement
	s := &Signatures{
		Catalogue:     st.Catalogue,
		KeyIDs:        []string{},
		SignedAt:      st.SignedAt.UTC().Format(time.RFC3339),
		SignedDigest:  st.Digest,
		Signers:       []Signer{},
		ThisArtifact:  st.Digest == artifactDigest,
		UnknownKeyIDs: []string{},
		Verification:  "not checked",
		Version:       st.Version,
	}
	seen := map[string]bool{}
	for _, sig := range e.Signatures {
		if !seen[sig.KeyID] {
			seen[sig.KeyID] = true
			s.KeyIDs = append(s.KeyIDs, sig.KeyID)
		}
	}
	if keys == nil {
		return s
	}
	v, err := signature.Verify(e, artifactDigest, keys)
	if err != nil {
		s.Verification = "refused: " + signature.Reason(err) + ": " + err.Error()
		return s
	}
	s.Verification = "verified"
	for _, k := range v.Signers {
		s.Signers = append(s.Signers, Signer{Alg: k.Alg, Group: k.Group, KeyID: k.KeyID})
	}
	s.UnknownKeyIDs = append(s.UnknownKeyIDs, v.Unknown...)
	return s
}

// signatureRows are the text lines of a Signatures.
func signatureRows(s *Signatures) [][2]string {
	signs := s.SignedDigest + " (this artifact)"
	if !s.ThisArtifact {
		signs = s.SignedDigest + " (ANOTHER artifact: garmd refuses this pair)"
	}
	rows := [][2]string{
		{"catalogue", s.Catalogue},
		{"version", fmt.Sprint(s.Version)},
		{"signed at", s.SignedAt},
		{"signs", signs},
		{"key ids", list(s.KeyIDs)},
	}
	if len(s.Signers) > 0 {
		var signers []string
		for _, k := range s.Signers {
			signers = append(signers, signerText(k))
		}
		rows = append(rows, [2]string{"signers", strings.Join(signers, ", ")})
	}
	if len(s.UnknownKeyIDs) > 0 {
		rows = append(rows, [2]string{"unknown keys", list(s.UnknownKeyIDs)})
	}
	return append(rows, [2]string{"verification", s.Verification})
}

func signerText(k Signer) string {
	if k.Group == "" {
		return fmt.Sprintf("%s (%s)", k.KeyID, k.Alg)
	}
	return fmt.Sprintf("%s (%s, %s)", k.KeyID, k.Alg, k.Group)
}

// WriteSignatureDiff writes how the signatures of two artifacts differ —
// catalogue name, version, and which signers left and joined — for `diff`.
// Either side may be nil (unsigned). Signers are the verified ones when
// both sides were verified, else the key ids the envelopes claim.
func WriteSignatureDiff(w io.Writer, old, updated *Signatures) error {
	p := &printer{w: w}
	p.line("signatures")
	switch {
	case old == nil && updated == nil:
		p.line("  neither artifact is signed")
		return p.err
	case old == nil:
		p.line(fmt.Sprintf("  signed now: %s version %d by %s", updated.Catalogue, updated.Version, list(signerNames(updated))))
		return p.err
	case updated == nil:
		p.line(fmt.Sprintf("  no longer signed (was %s version %d by %s): garmd with --catalogue-keys refuses it", old.Catalogue, old.Version, list(signerNames(old))))
		return p.err
	}
	if old.Catalogue != updated.Catalogue {
		p.line(fmt.Sprintf("  catalogue %s -> %s", old.Catalogue, updated.Catalogue))
	}
	switch {
	case updated.Version > old.Version:
		p.line(fmt.Sprintf("  version %d -> %d", old.Version, updated.Version))
	case updated.Version == old.Version:
		p.line(fmt.Sprintf("  version %d, unchanged", old.Version))
	default:
		p.line(fmt.Sprintf("  version %d -> %d: LOWER, garmd serving the old one refuses the new as a rollback", old.Version, updated.Version))
	}
	before, after := signerNames(old), signerNames(updated)
	removed, added := difference(before, after), difference(after, before)
	for _, k := range removed {
		p.line("  signer removed " + k)
	}
	for _, k := range added {
		p.line("  signer added   " + k)
	}
	if len(removed) == 0 && len(added) == 0 {
		p.line("  signers unchanged: " + list(after))
	}
	return p.err
}

// signerNames are the verified signers when there are any, else the
// claimed key ids.
func signerNames(s *Signatures) []string {
	if len(s.Signers) == 0 {
		return s.KeyIDs
	}
	var out []string
	for _, k := range s.Signers {
		out = append(out, signerText(k))
	}
	return out
}

// difference is what a holds that b does not, in a's order.
func difference(a, b []string) []string {
	in := map[string]bool{}
	for _, s := range b {
		in[s] = true
	}
	var out []string
	for _, s := range a {
		if !in[s] {
			out = append(out, s)
		}
	}
	return out
}
