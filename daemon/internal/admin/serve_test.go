package admin_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/garm-dev/garm/daemon/internal/admin"
)

// bound is how long a test waits for something that should already have
// happened; reaching it is a failure, never a measurement.
const bound = 10 * time.Second

func startServe(t *testing.T, ctx context.Context, h http.Handler) (url string, done <-chan error) {
	t.Helper()
	l, err := admin.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- admin.Serve(ctx, l, h) }()
	return "http://" + l.Addr().String(), errc
}

func waitServe(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(bound):
		t.Fatalf("Serve did not return within %s", bound)
		return nil
	}
}

func TestServeAnswersUntilTheContextEndsThenStops(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	url, done := startServe(t, ctx, admin.Handler(admin.Config{Ready: alwaysReady}))

	if got := do(t, http.MethodGet, url+admin.HealthzPath); got.status != http.StatusOK {
		t.Fatalf("GET /healthz = %d", got.status)
	}
	cancel()
	if err := waitServe(t, done); err != nil {
		t.Fatalf("Serve after cancel = %v, want nil", err)
	}
	if _, err := client.Get(url + admin.HealthzPath); err == nil {
		t.Fatal("the listener still answers after Serve returned")
	}
}

func TestShutdownLetsAnInFlightScrapeFinish(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	entered, release := make(chan struct{}), make(chan struct{})
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
		_, _ = w.Write([]byte("scraped"))
	})
	url, done := startServe(t, ctx, admin.Handler(admin.Config{Ready: alwaysReady, Metrics: slow}))

	type result struct {
		resp *http.Response
		body []byte
		err  error
	}
	scraped := make(chan result, 1)
	go func() {
		resp, err := client.Get(url + admin.MetricsPath)
		if err != nil {
			scraped <- result{err: err}
			return
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		scraped <- result{resp, body, err}
	}()
	select {
	case <-entered:
	case <-time.After(bound):
		t.Fatal("the scrape never reached the handler")
	}
	cancel()
	close(release)
	select {
	case got := <-scraped:
		if got.err != nil {
			t.Fatalf("in-flight scrape cut off: %v", got.err)
		}
		if got.resp.StatusCode != http.StatusOK || string(got.body) != "scraped" {
			t.Fatalf("in-flight scrape = %d %q, want it finished", got.resp.StatusCode, got.body)
		}
	case <-time.After(bound):
		t.Fatal("the in-flight scrape never finished")
	}
	if err := waitServe(t, done); err != nil {
		t.Fatalf("Serve = %v, want nil", err)
	}
}

func TestServeReportsAListenerThatFails(t *testing.T) {
	l, err := admin.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	done := make(chan error, 1)
	go func() { done <- admin.Serve(t.Context(), l, admin.Handler(admin.Config{})) }()
	if err := waitServe(t, done); err == nil || errors.Is(err, http.ErrServerClosed) {
		t.Fatalf("Serve on a closed listener = %v, want the accept error", err)
	}
}

func TestListenRefusesAnAddressThatNamesNoHost(t *testing.T) {
	for _, addr := range []string{":0", "7441", ""} {
		if l, err := admin.Listen(addr); err == nil {
			l.Close()
			t.Errorf("Listen(%q) succeeded, want it refused", addr)
		}
	}
}

func TestListenBindsAnyNamedAddressAndSaysWhetherItIsLoopback(t *testing.T) {
	cases := []struct {
		addr     string
		loopback bool
	}{
		{"127.0.0.1:0", true},
		{"localhost:0", true},
		{"0.0.0.0:0", false},
	}
	for _, c := range cases {
		l, err := admin.Listen(c.addr)
		if err != nil {
			t.Fatalf("Listen(%q): %v", c.addr, err)
		}
		if got := admin.IsLoopback(l.Addr()); got != c.loopback {
			t.Errorf("IsLoopback(Listen(%q) = %s) = %v, want %v", c.addr, l.Addr(), got, c.loopback)
		}
		l.Close()
	}
}

func TestIsLoopbackJudgesTheBoundAddress(t *testing.T) {
	cases := []struct {
		addr net.Addr
		want bool
	}{
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}, true},
		{&net.TCPAddr{IP: net.IPv4(127, 8, 9, 10)}, true},
		{&net.TCPAddr{IP: net.IPv6loopback}, true},
		{&net.TCPAddr{IP: net.IPv4zero}, false},
		{&net.TCPAddr{IP: net.IPv6unspecified}, false},
		{&net.TCPAddr{IP: net.IPv4(10, 0, 0, 1)}, false},
		{&net.UnixAddr{Name: "/tmp/admin.sock", Net: "unix"}, false},
	}
	for _, c := range cases {
		if got := admin.IsLoopback(c.addr); got != c.want {
			t.Errorf("IsLoopback(%s) = %v, want %v", c.addr, got, c.want)
		}
	}
}
