// Package testpki makes a throwaway certificate authority for a test: a
// P-256 CA and one certificate for 127.0.0.1 that serves and authenticates
// as a client, written as PEM files into a directory of the test's own.
// Keys are made at run time and never leave the test's temporary
// directory.
package testpki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// PKI is the authority and its one certificate.
type PKI struct {
	// Dir is the directory the files are in, the test's own.
	Dir string
	// CA, Cert and Key are the PEM files of the authority's certificate,
	// the certificate for 127.0.0.1 and its key.
	CA, Cert, Key string
	// Pool trusts the authority.
	Pool *x509.CertPool
	// Pair is Cert with Key, for a server or client made in the test.
	Pair tls.Certificate
}

// New makes a PKI valid for an hour either side of now.
func New(t testing.TB) *PKI {
	t.Helper()
	p := &PKI{Dir: t.TempDir(), Pool: x509.NewCertPool()}
	caKey := newKey(t)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "garm test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	p.Pool.AddCert(caCert)
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	p.CA = p.write(t, "ca.pem", "CERTIFICATE", caDER)
	p.Cert = p.write(t, "cert.pem", "CERTIFICATE", der)
	p.Key = p.write(t, "key.pem", "EC PRIVATE KEY", keyDER)
	p.Pair = tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	return p
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func (p *PKI) write(t testing.TB, name, kind string, der []byte) string {
	t.Helper()
	path := filepath.Join(p.Dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
