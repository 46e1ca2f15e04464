package idp_test

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/garm-dev/garm/devkit/idp"
)

func TestTheServerRefusesEveryAddressThatIsNotLoopback(t *testing.T) {
	i := newIdP(t, idp.Options{})
	for _, addr := range []string{
		":0", "0.0.0.0:0", "[::]:0", "10.0.0.1:0", "192.0.2.1:0", "[2001:db8::1]:0",
		"example.com:0", "idp.garm.invalid:0", "localhost.example.com:0", "127.0.0.1",
	} {
		srv, err := i.Start(addr)
		if err == nil {
			_ = srv.Close()
			t.Errorf("Start(%q) listened on %s", addr, srv.Addr())
		}
	}
}

func TestTheServerListensOnLoopbackAndStops(t *testing.T) {
	ctx := testContext(t)
	i := newIdP(t, idp.Options{})
	for _, addr := range []string{"127.0.0.1:0", "localhost:0"} {
		srv, err := i.Start(addr)
		if err != nil {
			t.Fatalf("Start(%q): %v", addr, err)
		}
		tcp := srv.Addr().(*net.TCPAddr)
		if !tcp.IP.IsLoopback() || tcp.Port == 0 {
			_ = srv.Close()
			t.Fatalf("Start(%q) bound %s", addr, srv.Addr())
		}
		if srv.URL() != "http://"+srv.Addr().String() || srv.JWKSURL() != srv.URL()+"/.well-known/jwks.json" {
			t.Errorf("URL %q JWKSURL %q", srv.URL(), srv.JWKSURL())
		}
		if res := do(t, ctx, http.MethodGet, srv.JWKSURL()); res.status != http.StatusOK {
			t.Errorf("GET %s: %d", srv.JWKSURL(), res.status)
		}
		stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err = srv.Shutdown(stopCtx)
		cancel()
		if err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
		if conn, err := net.DialTimeout("tcp", srv.Addr().String(), 5*time.Second); err == nil {
			_ = conn.Close()
			t.Errorf("%s still accepts connections after Shutdown", srv.Addr())
		}
		if err := srv.Close(); err != nil {
			t.Errorf("Close after Shutdown: %v", err)
		}
	}
}
