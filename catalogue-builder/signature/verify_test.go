package signature_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/signature"
)

// wire is an envelope as JSON, for tests that tamper with one.
type wire struct {
	PayloadType string `json:"payloadType"`
	Payload     string `json:"payload"`
	Signatures  []struct {
		KeyID string `json:"keyid"`
		Sig   string `json:"sig"`
	} `json:"signatures"`
}

func tamper(t *testing.T, data []byte, f func(w *wire)) []byte {
	t.Helper()
	var w wire
	if err := json.Unmarshal(data, &w); err != nil {
		t.Fatal(err)
	}
	f(&w)
	out, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestEveryHostileEnvelopeIsRefusedWithItsReason is issue 36 §3's list of
// hostile signatures, each refused for the reason a log line names.
func TestEveryHostileEnvelopeIsRefusedWithItsReason(t *testing.T) {
	t.Parallel()
	owner := newSigner(t, signature.AlgEdDSA)
	security := newSigner(t, signature.AlgES256)
	stranger := newSigner(t, signature.AlgEdDSA)
	keys := keySet(t, map[*signature.Signer]string{owner: "owners", security: "security"}, owner, security)
	good := signed(t, 2, owner, security)
	artifactDigest := digestOf(testArtifact)

	overOther := func() []byte {
		st := statement(2)
		st.Digest = digestOf([]byte("another catalogue"))
		e, err := signature.Sign(st, owner)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := e.Marshal()
		return out
	}()
	// A statement re-encoded (spaced out) and signed as it is: the
	// signature is good, the encoding is not the statement's one.
	respaced := func() []byte {
		e, err := signature.Sign(statement(2), owner)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		_ = json.Indent(&buf, e.Payload, "", " ")
		e.Payload, e.Signatures = buf.Bytes(), nil
		if err := signature.AddSignature(e, owner); err != nil {
			t.Fatal(err)
		}
		out, _ := e.Marshal()
		return out
	}()
	strangerAsSecurity := tamper(t, signed(t, 2, stranger), func(w *wire) {
		w.Signatures[0].KeyID = security.KeyID()
	})
	strangerAsOwner := tamper(t, signed(t, 2, stranger), func(w *wire) {
		w.Signatures[0].KeyID = owner.KeyID()
	})
	ownerSigBroken := tamper(t, good, func(w *wire) {
		sig, _ := base64.StdEncoding.DecodeString(w.Signatures[0].Sig)
		sig[5] ^= 1
		w.Signatures[0].Sig = base64.StdEncoding.EncodeToString(sig)
	})
	for _, tc := range []struct {
		name     string
		envelope []byte
		digest   string
		want     error
	}{
		{"a signature over another artifact", overOther, artifactDigest, signature.ErrDigestMismatch},
		{"the artifact changed after signing", good, digestOf(append([]byte("!"), testArtifact...)), signature.ErrDigestMismatch},
		{"a truncated envelope", good[:len(good)/2], artifactDigest, signature.ErrMalformed},
		{"an envelope cut before its last brace", bytes.TrimSpace(good)[:len(bytes.TrimSpace(good))-1], artifactDigest, signature.ErrMalformed},
		{"a payload re-encoded in URL-safe base64", tamper(t, good, func(w *wire) {
			raw, _ := base64.StdEncoding.DecodeString(w.Payload)
			w.Payload = base64.RawURLEncoding.EncodeToString(raw)
		}), artifactDigest, signature.ErrMalformed},
		{"a signature split over lines", tamper(t, good, func(w *wire) {
			w.Signatures[0].Sig = w.Signatures[0].Sig[:10] + "\n" + w.Signatures[0].Sig[10:]
		}), artifactDigest, signature.ErrMalformed},
		{"a statement re-encoded and signed", respaced, artifactDigest, signature.ErrMalformed},
		{"another payload type", tamper(t, good, func(w *wire) { w.PayloadType = "application/vnd.in-toto+json" }), artifactDigest, signature.ErrMalformed},
		{"a member named twice", bytes.Replace(good, []byte(`"payloadType"`), []byte(`"payloadType": "x", "payloadType"`), 1), artifactDigest, signature.ErrMalformed},
		{"a member in another case", bytes.Replace(good, []byte(`"payloadType"`), []byte(`"PayloadType"`), 1), artifactDigest, signature.ErrMalformed},
		{"no signature", tamper(t, good, func(w *wire) { w.Signatures = w.Signatures[:0] }), artifactDigest, signature.ErrUnsigned},
		{"an unknown key id", signed(t, 2, stranger), artifactDigest, signature.ErrUnknownKey},
		{"an Ed25519 signature presented as the P-256 key's", strangerAsSecurity, artifactDigest, signature.ErrBadSignature},
		{"another Ed25519 key's signature under the owner's key id", strangerAsOwner, artifactDigest, signature.ErrBadSignature},
		{"a known key's broken signature beside a good one", ownerSigBroken, artifactDigest, signature.ErrBadSignature},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := signature.Parse(tc.envelope)
			if err == nil {
				_, err = signature.Verify(e, tc.digest, keys)
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if signature.Reason(err) == "other" {
				t.Errorf("Reason(%v) = other", err)
			}
		})
	}
}

func TestOneKeySigningTwiceCountsOnce(t *testing.T) {
	t.Parallel()
	owner, security := newSigner(t, signature.AlgEdDSA), newSigner(t, signature.AlgES256)
	keys := keySet(t, nil, owner, security)
	once := signed(t, 1, owner)
	twice := tamper(t, once, func(w *wire) { w.Signatures = append(w.Signatures, w.Signatures[0]) })
	e, err := signature.Parse(twice)
	if err != nil {
		t.Fatal(err)
	}
	v, err := signature.Verify(e, digestOf(testArtifact), keys)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Signers) != 1 {
		t.Fatalf("signers = %+v, want the owner once", v.Signers)
	}
	if err := (signature.Policy{MinSigners: 2}).Check(v); !errors.Is(err, signature.ErrTooFewSigners) {
		t.Fatalf("a two-signer policy met by one key signing twice: %v", err)
	}
}

func TestARotatedOutKeyIsSetAsideWhileAKnownKeyStillVouches(t *testing.T) {
	t.Parallel()
	old, next := newSigner(t, signature.AlgEdDSA), newSigner(t, signature.AlgEdDSA)
	e, err := signature.Parse(signed(t, 4, old, next))
	if err != nil {
		t.Fatal(err)
	}
	v, err := signature.Verify(e, digestOf(testArtifact), keySet(t, nil, next))
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Signers) != 1 || v.Signers[0].KeyID != next.KeyID() || len(v.Unknown) != 1 || v.Unknown[0] != old.KeyID() {
		t.Fatalf("verified = %+v, want the new key as signer and the old one set aside", v)
	}
	only, err := signature.Parse(signed(t, 4, old))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := signature.Verify(only, digestOf(testArtifact), keySet(t, nil, next)); !errors.Is(err, signature.ErrUnknownKey) {
		t.Fatalf("signed only by the removed key: %v, want ErrUnknownKey", err)
	}
}

func TestReasonNamesEveryCheck(t *testing.T) {
	t.Parallel()
	for err, want := range map[error]string{
		signature.ErrMalformed:      "malformed",
		signature.ErrUnsigned:       "unsigned",
		signature.ErrUnknownKey:     "unknown_key",
		signature.ErrBadSignature:   "bad_signature",
		signature.ErrDigestMismatch: "digest_mismatch",
		signature.ErrTooFewSigners:  "too_few_signers",
		errors.New("else"):          "other",
	} {
		if got := signature.Reason(errors.Join(errors.New("wrapped"), err)); got != want {
			t.Errorf("Reason(%v) = %q, want %q", err, got, want)
		}
	}
	if !strings.Contains(signature.ErrDigestMismatch.Error(), "digest") {
		t.Error("the digest mismatch's message does not say digest")
	}
}
