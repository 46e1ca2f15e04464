package testpki

import (
	"crypto/tls"
	"crypto/x509"
	"testing"
)

// TestTheCertificateServesAndAuthenticatesAsAClient: the files load as a
// pair, and the certificate verifies under the pool for 127.0.0.1 as a
// server and as a client.
func TestTheCertificateServesAndAuthenticatesAsAClient(t *testing.T) {
	p := New(t)
	pair, err := tls.LoadX509KeyPair(p.Cert, p.Key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, usage := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: p.Pool, DNSName: "127.0.0.1", KeyUsages: []x509.ExtKeyUsage{usage}}); err != nil {
			t.Fatalf("%v: %v", usage, err)
		}
	}
	if string(p.Pair.Certificate[0]) != string(pair.Certificate[0]) {
		t.Fatal("Pair is not the files' certificate")
	}
}
