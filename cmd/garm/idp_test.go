package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestGarmIdPWithIssuerIsTheIssuerItServesAt: --issuer sets the iss of the
// provider's tokens and its OpenID Connect discovery, so garmd's --issuer
// and the approvals service's --oidc-issuer can both be where it serves, as
// the operators' recipe runs it.
func TestGarmIdPWithIssuerIsTheIssuerItServesAt(t *testing.T) {
	t.Parallel()
	port := freeLoopbackPort(t)
	issuer := "http://127.0.0.1:" + port
	ctx, cancel := context.WithCancel(t.Context())
	var out lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- runIdP(ctx, []string{"--personas", repoFile("examples", "bank", "personas.yaml"), "--listen", "127.0.0.1:" + port, "--issuer", issuer}, &out, &out)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "issuer   "+issuer+"\n") {
		if time.Now().After(deadline) {
			t.Fatalf("garm idp does not say it issues as %s:\n%s", issuer, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	resp, err := http.Get(issuer + "/.well-known/openid-configuration")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var discovery struct {
		Issuer string `json:"issuer"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&discovery); err != nil || discovery.Issuer != issuer {
		t.Errorf("discovery names issuer %q (%v), want %q", discovery.Issuer, err, issuer)
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// freeLoopbackPort is a loopback port free when asked.
func freeLoopbackPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}
