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
