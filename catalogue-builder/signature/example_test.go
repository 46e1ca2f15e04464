package signature_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/garm-dev/garm/catalogue-builder/signature"
)

// Two owners sign version 7 of a catalogue; a reader holding their public
// keys verifies the envelope against the bytes it read and requires both.
func Example() {
	artifact := []byte("the catalogue's bytes")
	alice, _, _ := signature.GenerateKey(signature.AlgEdDSA)
	bob, _, _ := signature.GenerateKey(signature.AlgES256)

	st := signature.Statement{Catalogue: "payments", Digest: digestOf(artifact), Version: 7, SignedAt: time.Now()}
	envelope, _ := signature.Sign(st, alice)
	_ = signature.AddSignature(envelope, bob) // the second signer, later
	data, _ := envelope.Marshal()             // written beside the artifact, at EnvelopeLocation

	var jwks []map[string]any
	for _, s := range []*signature.Signer{alice, bob} {
		j, _ := signature.PublicJWK(s.Public(), "owners")
		jwks = append(jwks, j)
	}
	set, _ := signature.MarshalKeySet(jwks)
	keys, _ := signature.ParseKeySet(set)

	read, err := signature.Parse(data)
	if err != nil {
		fmt.Println(signature.Reason(err))
		return
	}
	verified, err := signature.Verify(read, digestOf(artifact), keys)
	if err != nil {
		fmt.Println(signature.Reason(err))
		return
	}
	fmt.Println(verified.Statement.Catalogue, verified.Statement.Version, len(verified.Signers), "signers")
	fmt.Println(signature.Policy{MinPerGroup: map[string]int{"owners": 2}}.Check(verified))

	_, err = signature.Verify(read, digestOf([]byte("other bytes")), keys)
	fmt.Println(signature.Reason(err), errors.Is(err, signature.ErrDigestMismatch))
	// Output:
	// payments 7 2 signers
	// <nil>
	// digest_mismatch true
}
