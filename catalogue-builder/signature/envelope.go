package signature

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"
)

// Bounds on an envelope. A real one holds a statement of a few hundred
// bytes and a signature or two; the bounds leave room for a board of
// signers while keeping a hostile file from costing a reader anything.
const (
	// MaxEnvelopeBytes bounds the envelope file or object as read.
	MaxEnvelopeBytes = 64 << 10
	// MaxSignatures bounds the signatures one envelope may carry.
	MaxSignatures = 32
	// MaxKeyIDBytes bounds a signature's keyid.
	MaxKeyIDBytes = 128
	// MaxSignatureBytes bounds one decoded signature (an ASN.1 P-256
	// signature is at most 72 bytes, an Ed25519 one 64).
	MaxSignatureBytes = 256
)

// Envelope is a DSSE envelope over a catalogue Statement, with the
// statement already read. Parse makes one from bytes; Sign makes a new one.
type Envelope struct {
	// Statement is the payload, decoded.
	Statement Statement
	// Payload is the statement's exact bytes, which every signature covers
	// (with PayloadType, through DSSE's PAE).
	Payload []byte
	// Signatures in the order they were added.
	Signatures []Signature
}

// Signature is one signer's signature over the envelope's PAE.
type Signature struct {
	// KeyID names the key in the catalogue key set: its JWK kid, which is
	// the key's RFC 7638 thumbprint.
	KeyID string
	// Sig is the raw signature: 64 bytes for Ed25519, ASN.1 DER for ECDSA
	// P-256.
	Sig []byte
}

// Marshal writes the envelope as DSSE JSON, with standard padded base64.
func (e *Envelope) Marshal() ([]byte, error) {
	if len(e.Signatures) > MaxSignatures {
		return nil, fmt.Errorf("%d signatures: at most %d", len(e.Signatures), MaxSignatures)
	}
	w := dsse.Envelope{
		PayloadType: PayloadType,
		Payload:     base64.StdEncoding.EncodeToString(e.Payload),
		Signatures:  make([]dsse.Signature, 0, len(e.Signatures)),
	}
	for _, s := range e.Signatures {
		w.Signatures = append(w.Signatures, dsse.Signature{KeyID: s.KeyID, Sig: base64.StdEncoding.EncodeToString(s.Sig)})
	}
	out, err := json.MarshalIndent(w, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// Digest is the envelope's bytes' identity, "sha256:" and the hex SHA-256,
// for a log line or for telling two envelopes apart.
func EnvelopeDigest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Parse reads an envelope strictly. It refuses (with ErrMalformed) bytes
// over MaxEnvelopeBytes; anything but one JSON object with exactly the
// members payloadType, payload and signatures; a member named twice at any
// level; a payloadType other than PayloadType; base64 that is not standard,
// padded and canonical; more than MaxSignatures signatures; a signature
// object with members other than keyid and sig, an empty or oversized keyid
// or signature; and a payload that is not a statement in its one encoding.
// It checks no signature: that is Verify's work.
func Parse(data []byte) (*Envelope, error) {
	e, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return e, nil
}

func parse(data []byte) (*Envelope, error) {
	if len(data) > MaxEnvelopeBytes {
		return nil, fmt.Errorf("the envelope is larger than %d bytes", MaxEnvelopeBytes)
	}
	if err := checkJSON(data); err != nil {
		return nil, fmt.Errorf("the envelope: %w", err)
	}
	m, err := members(data, []string{"payloadType", "payload", "signatures"}, nil)
	if err != nil {
		return nil, fmt.Errorf("the envelope: %w", err)
	}
	pt, err := jsonString(m, "payloadType")
	if err != nil {
		return nil, fmt.Errorf("the envelope: %w", err)
	}
	if pt != PayloadType {
		return nil, fmt.Errorf("the payloadType is %s, not %s", clip(pt), PayloadType)
	}
	p64, err := jsonString(m, "payload")
	if err != nil {
		return nil, fmt.Errorf("the envelope: %w", err)
	}
	payload, err := strictBase64(p64, 4*MaxStatementBytes)
	if err != nil {
		return nil, fmt.Errorf("the payload: %w", err)
	}
	st, err := parseStatement(payload)
	if err != nil {
		return nil, err
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(m["signatures"], &raws); err != nil || raws == nil {
		return nil, fmt.Errorf("the envelope: signatures is not an array")
	}
	if len(raws) > MaxSignatures {
		return nil, fmt.Errorf("%d signatures: at most %d", len(raws), MaxSignatures)
	}
	e := &Envelope{Statement: st, Payload: payload}
	for i, raw := range raws {
		sm, err := members(raw, []string{"keyid", "sig"}, nil)
		if err != nil {
			return nil, fmt.Errorf("signature %d: %w", i, err)
		}
		kid, err := jsonString(sm, "keyid")
		if err != nil {
			return nil, fmt.Errorf("signature %d: %w", i, err)
		}
		if kid == "" || len(kid) > MaxKeyIDBytes {
			return nil, fmt.Errorf("signature %d: the keyid is empty or longer than %d bytes", i, MaxKeyIDBytes)
		}
		s64, err := jsonString(sm, "sig")
		if err != nil {
			return nil, fmt.Errorf("signature %d: %w", i, err)
		}
		sig, err := strictBase64(s64, MaxSignatureBytes)
		if err != nil {
			return nil, fmt.Errorf("signature %d: %w", i, err)
		}
		if len(sig) == 0 {
			return nil, fmt.Errorf("signature %d: empty", i)
		}
		e.Signatures = append(e.Signatures, Signature{KeyID: kid, Sig: sig})
	}
	return e, nil
}

// strictBase64 decodes standard padded base64 that is in its canonical
// form: the encoding of what it decodes to. DSSE readers often accept
// either alphabet; this one accepts one spelling of each value, so an
// envelope cannot be re-encoded into different bytes that still verify.
func strictBase64(s string, maxDecoded int) ([]byte, error) {
	if base64.StdEncoding.DecodedLen(len(s)) > maxDecoded {
		return nil, fmt.Errorf("longer than %d bytes", maxDecoded)
	}
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("not standard padded base64: %w", err)
	}
	if base64.StdEncoding.EncodeToString(b) != s {
		return nil, fmt.Errorf("not canonical base64")
	}
	return b, nil
}
