package signature_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/garm-dev/garm/catalogue-builder/signature"
)

func TestAnEnvelopeSignedByEitherKindOfKeyVerifiesAgainstItsArtifact(t *testing.T) {
	t.Parallel()
	for _, alg := range []string{signature.AlgEdDSA, signature.AlgES256} {
		t.Run(alg, func(t *testing.T) {
			t.Parallel()
			s := newSigner(t, alg)
			e, err := signature.Parse(signed(t, 7, s))
			if err != nil {
				t.Fatal(err)
			}
			v, err := signature.Verify(e, digestOf(testArtifact), keySet(t, nil, s))
			if err != nil {
				t.Fatal(err)
			}
			if v.Statement != statement(7) {
				t.Errorf("statement = %+v, want %+v", v.Statement, statement(7))
			}
			if len(v.Signers) != 1 || v.Signers[0].KeyID != s.KeyID() || v.Signers[0].Alg != alg {
				t.Errorf("signers = %+v, want one %s key %s", v.Signers, alg, s.KeyID())
			}
		})
	}
}

func TestASecondSignerAddsToTheSameStatement(t *testing.T) {
	t.Parallel()
	a, b := newSigner(t, signature.AlgEdDSA), newSigner(t, signature.AlgES256)
	e, err := signature.Parse(signed(t, 3, a))
	if err != nil {
		t.Fatal(err)
	}
	payload := string(e.Payload)
	if err := signature.AddSignature(e, b); err != nil {
		t.Fatal(err)
	}
	if string(e.Payload) != payload {
		t.Fatal("adding a signature changed the statement")
	}
	out, err := e.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := signature.Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	groups := map[*signature.Signer]string{a: "owners", b: "security"}
	v, err := signature.Verify(back, digestOf(testArtifact), keySet(t, groups, a, b))
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Signers) != 2 {
		t.Fatalf("signers = %+v, want two", v.Signers)
	}
	if err := (signature.Policy{MinSigners: 2, MinPerGroup: map[string]int{"owners": 1, "security": 1}}).Check(v); err != nil {
		t.Errorf("two signers from two groups fall short: %v", err)
	}
}

func TestOneKeyCannotSignAStatementTwice(t *testing.T) {
	t.Parallel()
	a := newSigner(t, signature.AlgEdDSA)
	if _, err := signature.Sign(statement(1), a, a); !errors.Is(err, signature.ErrAlreadySigned) {
		t.Fatalf("Sign(a, a) = %v, want ErrAlreadySigned", err)
	}
	e, err := signature.Sign(statement(1), a)
	if err != nil {
		t.Fatal(err)
	}
	if err := signature.AddSignature(e, a); !errors.Is(err, signature.ErrAlreadySigned) {
		t.Fatalf("AddSignature(a) again = %v, want ErrAlreadySigned", err)
	}
}

func TestAStatementThatCannotBeVerifiedIsNotSigned(t *testing.T) {
	t.Parallel()
	s := newSigner(t, signature.AlgEdDSA)
	good := statement(1)
	for name, mutate := range map[string]func(*signature.Statement){
		"version zero":        func(st *signature.Statement) { st.Version = 0 },
		"no name":             func(st *signature.Statement) { st.Catalogue = "" },
		"a name with a space": func(st *signature.Statement) { st.Catalogue = "pay ments" },
		"an uppercase digest": func(st *signature.Statement) { st.Digest = strings.ToUpper(good.Digest) },
		"a digest of sha512":  func(st *signature.Statement) { st.Digest = "sha512:" + good.Digest[7:] },
		"no signing time":     func(st *signature.Statement) { st.SignedAt = time.Time{} },
		"a digest too short":  func(st *signature.Statement) { st.Digest = good.Digest[:20] },
	} {
		st := good
		mutate(&st)
		if _, err := signature.Sign(st, s); err == nil {
			t.Errorf("%s: signed", name)
		}
	}
}

func TestOnlyEd25519AndP256PrivateKeysLoad(t *testing.T) {
	t.Parallel()
	s, pemBytes, err := signature.GenerateKey(signature.AlgES256)
	if err != nil {
		t.Fatal(err)
	}
	back, err := signature.LoadSigner(pemBytes)
	if err != nil {
		t.Fatal(err)
	}
	if back.KeyID() != s.KeyID() {
		t.Errorf("the key id changed across PEM: %s != %s", back.KeyID(), s.KeyID())
	}
	for name, data := range map[string][]byte{
		"two blocks":  append(append([]byte{}, pemBytes...), pemBytes...),
		"public PEM":  []byte(strings.Replace(string(pemBytes), "PRIVATE KEY", "PUBLIC KEY", 2)),
		"not PEM":     []byte("hello"),
		"a P-384 key": p384PEM(t),
	} {
		if _, err := signature.LoadSigner(data); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
	if _, _, err := signature.GenerateKey("RS256"); err == nil {
		t.Error("generated an RS256 key")
	}
}
