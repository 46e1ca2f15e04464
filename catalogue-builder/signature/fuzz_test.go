package signature_test

import (
	"bytes"
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/signature"
)

// FuzzParse feeds the envelope reader anything. It must never panic, and
// whatever it accepts must write back to bytes it reads as the same
// envelope: one meaning per envelope.
func FuzzParse(f *testing.F) {
	ed, p256 := newSigner(f, signature.AlgEdDSA), newSigner(f, signature.AlgES256)
	good := signed(f, 9, ed, p256)
	f.Add(good)
	f.Add(good[:len(good)/3])
	f.Add([]byte(`{"payloadType":"application/vnd.garm.catalogue-statement+json","payload":"","signatures":[]}`))
	f.Add([]byte(`{"payloadType":"x","payloadType":"y"}`))
	f.Add([]byte(`[[[[[[[[[[[[]]]]]]]]]]]]`))
	f.Add([]byte(`{} {}`))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := signature.Parse(data)
		if err != nil {
			return
		}
		out, err := e.Marshal()
		if err != nil {
			t.Fatalf("an accepted envelope does not write: %v", err)
		}
		back, err := signature.Parse(out)
		if err != nil {
			t.Fatalf("an accepted envelope written back does not read: %v", err)
		}
		if !bytes.Equal(back.Payload, e.Payload) || back.Statement != e.Statement || len(back.Signatures) != len(e.Signatures) {
			t.Fatalf("an envelope changed across a write: %+v != %+v", back, e)
		}
		for i := range e.Signatures {
			if back.Signatures[i].KeyID != e.Signatures[i].KeyID || !bytes.Equal(back.Signatures[i].Sig, e.Signatures[i].Sig) {
				t.Fatalf("signature %d changed across a write", i)
			}
		}
	})
}

// FuzzParseKeySet feeds the key set reader anything: it never panics, and
// every key it accepts is one Verify can use, with its kid its thumbprint.
func FuzzParseKeySet(f *testing.F) {
	ed, p256 := newSigner(f, signature.AlgEdDSA), newSigner(f, signature.AlgES256)
	f.Add(keySetJSON(f, map[*signature.Signer]string{ed: "owners"}, ed, p256))
	f.Add([]byte(`{"keys":[{"kty":"OKP","crv":"Ed25519","x":"AA","kid":"a","use":"garm-catalogue","alg":"ES256"}]}`))
	f.Add([]byte(`{"keys":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		set, err := signature.ParseKeySet(data)
		if err != nil {
			return
		}
		for _, k := range set.Keys() {
			kid, err := signature.Thumbprint(k.Public())
			if err != nil || kid != k.KeyID {
				t.Fatalf("an accepted key's kid %s is not its thumbprint %s (%v)", k.KeyID, kid, err)
			}
			if k.Alg != signature.AlgEdDSA && k.Alg != signature.AlgES256 {
				t.Fatalf("an accepted key's alg is %s", k.Alg)
			}
		}
	})
}
