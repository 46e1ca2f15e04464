package signature

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"
)

// PayloadType is the DSSE payloadType of every envelope this package writes
// or reads: the payload is a Statement in JSON. A signature is over the
// type as well as the bytes (DSSE's PAE), so a signature made for any other
// kind of payload never verifies as a catalogue statement.
const PayloadType = "application/vnd.garm.catalogue-statement+json"

// MaxStatementBytes bounds a statement's JSON; a real one is a few hundred
// bytes.
const MaxStatementBytes = 4 << 10

// Statement is what every signer of a catalogue vouches for: this artifact,
// under this catalogue name, as this version. It is the DSSE payload.
type Statement struct {
	// Catalogue names the catalogue the artifact is a version of. Versions
	// are counted per name, so a reader must refuse a name other than the
	// one it serves (docs/decisions/0132).
	Catalogue string
	// Digest is the artifact's identity, "sha256:" and the lowercase hex
	// SHA-256 of its bytes (artifact.Digest, catalogue.proto's header).
	Digest string
	// Version is the catalogue's version number, at least 1. A reader that
	// has served version N refuses any version below N (issue 36 §2).
	Version uint64
	// SignedAt is when the first signer signed, to the second, in UTC.
	// Later signers sign the same statement and do not change it.
	SignedAt time.Time
}

// statementJSON is a Statement on the wire. Its members are written in
// this order and read only by these exact names.
type statementJSON struct {
	Catalogue string `json:"catalogue"`
	Digest    string `json:"digest"`
	Version   uint64 `json:"version"`
	SignedAt  string `json:"signed_at"`
}

var (
	catalogueNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
	digestRE        = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
)

// Validate reports what makes a statement unsignable: a catalogue name that
// is empty or not made of letters, digits, '.', '_' and '-' (at most 128),
// a digest that is not "sha256:" and 64 lowercase hex digits, version 0,
// or no signing time.
func (s Statement) Validate() error {
	var errs []error
	if !catalogueNameRE.MatchString(s.Catalogue) {
		errs = append(errs, fmt.Errorf("the catalogue name %s is not 1 to 128 letters, digits, '.', '_' or '-' starting with a letter or digit", clip(s.Catalogue)))
	}
	if !digestRE.MatchString(s.Digest) {
		errs = append(errs, fmt.Errorf("the digest %s is not sha256: and 64 lowercase hex digits", clip(s.Digest)))
	}
	if s.Version == 0 {
		errs = append(errs, errors.New("the version is 0; versions start at 1"))
	}
	if s.SignedAt.IsZero() {
		errs = append(errs, errors.New("the signing time is not set"))
	}
	return errors.Join(errs...)
}

// marshal is the statement's one encoding: the members in a fixed order,
// the time in RFC 3339 UTC to the second, no insignificant space.
func (s Statement) marshal() ([]byte, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return json.Marshal(statementJSON{
		Catalogue: s.Catalogue,
		Digest:    s.Digest,
		Version:   s.Version,
		SignedAt:  s.SignedAt.UTC().Truncate(time.Second).Format(time.RFC3339),
	})
}

// parseStatement reads a payload back. Only the bytes marshal would write
// for the statement they hold are accepted, so that one statement has one
// encoding and what a signer signed is exactly what a reader reads.
func parseStatement(payload []byte) (Statement, error) {
	if len(payload) > MaxStatementBytes {
		return Statement{}, fmt.Errorf("the statement is larger than %d bytes", MaxStatementBytes)
	}
	if err := checkJSON(payload); err != nil {
		return Statement{}, fmt.Errorf("the statement: %w", err)
	}
	if _, err := members(payload, []string{"catalogue", "digest", "version", "signed_at"}, nil); err != nil {
		return Statement{}, fmt.Errorf("the statement: %w", err)
	}
	var w statementJSON
	if err := json.Unmarshal(payload, &w); err != nil {
		return Statement{}, fmt.Errorf("the statement: %w", err)
	}
	at, err := time.Parse(time.RFC3339, w.SignedAt)
	if err != nil {
		return Statement{}, fmt.Errorf("the statement's signed_at: %w", err)
	}
	s := Statement{Catalogue: w.Catalogue, Digest: w.Digest, Version: w.Version, SignedAt: at.UTC()}
	canonical, err := s.marshal()
	if err != nil {
		return Statement{}, fmt.Errorf("the statement: %w", err)
	}
	if !bytes.Equal(canonical, payload) {
		return Statement{}, errors.New("the statement is not in its one encoding (member order, spacing, escapes or time format differ)")
	}
	return s, nil
}
