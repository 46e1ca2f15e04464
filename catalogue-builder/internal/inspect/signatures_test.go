package inspect

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/garm-dev/garm/catalogue-builder/signature"
)

func envelopeBy(t *testing.T, version uint64, digest string, signers ...*signature.Signer) *signature.Envelope {
	t.Helper()
	e, err := signature.Sign(signature.Statement{Catalogue: "shop", Digest: digest, Version: version, SignedAt: time.Date(2026, 12, 5, 5, 0, 0, 0, time.UTC)}, signers...)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func signerOf(t *testing.T) *signature.Signer {
	t.Helper()
	s, _, err := signature.GenerateKey(signature.AlgEdDSA)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func keysOf(t *testing.T, group string, signers ...*signature.Signer) *signature.KeySet {
	t.Helper()
	var jwks []map[string]any
	for _, s := range signers {
		j, err := signature.PublicJWK(s.Public(), group)
		if err != nil {
			t.Fatal(err)
		}
		jwks = append(jwks, j)
	}
	data, err := signature.MarshalKeySet(jwks)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := signature.ParseKeySet(data)
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

const digestA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

func TestSignaturesSayWhatVerifiedAndWhatDidNot(t *testing.T) {
	alice, bob := signerOf(t), signerOf(t)
	e := envelopeBy(t, 3, digestA, alice, bob)
	unchecked := DescribeSignatures(e, digestA, nil)
	if unchecked.Verification != "not checked" || len(unchecked.KeyIDs) != 2 || len(unchecked.Signers) != 0 || !unchecked.ThisArtifact {
		t.Errorf("without keys: %+v", unchecked)
	}
	checked := DescribeSignatures(e, digestA, keysOf(t, "owners", alice))
	if checked.Verification != "verified" || len(checked.Signers) != 1 || checked.Signers[0].Group != "owners" ||
		len(checked.UnknownKeyIDs) != 1 || checked.UnknownKeyIDs[0] != bob.KeyID() {
		t.Errorf("with alice's key: %+v", checked)
	}
	other := DescribeSignatures(e, "sha256:"+strings.Repeat("b", 64), keysOf(t, "", alice))
	if other.ThisArtifact || !strings.HasPrefix(other.Verification, "refused: digest_mismatch") {
		t.Errorf("over another artifact: %+v", other)
	}
	var text bytes.Buffer
	p := &printer{w: &text}
	p.block("", signatureRows(other))
	if !strings.Contains(text.String(), "ANOTHER artifact") {
		t.Errorf("the text does not call out another artifact:\n%s", text.String())
	}
}

func TestTheSignatureDiffNamesVersionsAndSigners(t *testing.T) {
	alice, bob := signerOf(t), signerOf(t)
	keys := keysOf(t, "owners", alice, bob)
	v3 := DescribeSignatures(envelopeBy(t, 3, digestA, alice), digestA, keys)
	v4 := DescribeSignatures(envelopeBy(t, 4, digestA, bob), digestA, keys)
	for _, tc := range []struct {
		name     string
		old, new *Signatures
		want     []string
	}{
		{"forward", v3, v4, []string{"version 3 -> 4", "signer removed " + alice.KeyID(), "signer added   " + bob.KeyID() + " (EdDSA, owners)"}},
		{"backward", v4, v3, []string{"version 4 -> 3: LOWER"}},
		{"same", v3, v3, []string{"version 3, unchanged", "signers unchanged"}},
		{"newly signed", nil, v3, []string{"signed now: shop version 3"}},
		{"no longer signed", v3, nil, []string{"no longer signed"}},
	} {
		var out bytes.Buffer
		if err := WriteSignatureDiff(&out, tc.old, tc.new); err != nil {
			t.Fatal(err)
		}
		for _, want := range tc.want {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%s: lacks %q:\n%s", tc.name, want, out.String())
			}
		}
	}
}
