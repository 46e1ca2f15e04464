package devplane_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/garm-dev/garm/devkit/devplane"
	"github.com/garm-dev/garm/examples/calculator/calculator"
	calcv1 "github.com/garm-dev/garm/examples/calculator/gen/calc/v1"
	"github.com/garm-dev/garm/runtime/garmtool"
)

// waitTimeout bounds every wait of these tests.
const waitTimeout = time.Minute

// The plane these tests share, read-only: the calculator served in process
// on every listener a free loopback port, with --traces printing to
// planeTraces. Started once by TestMain.
var (
	plane       *devplane.Plane
	planeLogs   = &syncBuffer{}
	planeTraces = &syncBuffer{}
	// cacheDir is the user's cache directory as the plane and garm call
	// see it: a temporary one, so the dev endpoint's secret is written
	// there and nowhere else.
	cacheDir string
)

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "devplane-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	// HOME too: os.UserCacheDir reads XDG_CACHE_HOME on Linux, HOME elsewhere.
	os.Setenv("HOME", dir)
	os.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	if cacheDir, err = os.UserCacheDir(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	os.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	os.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if plane, err = devplane.Start(ctx, testOptions()); err != nil {
		fmt.Fprintf(os.Stderr, "starting the plane: %v\n%s", err, planeLogs.String())
		return 1
	}
	code := m.Run()
	closeCtx, cancelClose := context.WithTimeout(context.Background(), waitTimeout)
	defer cancelClose()
	if err := plane.Close(closeCtx); err != nil {
		fmt.Fprintf(os.Stderr, "closing the plane: %v\n", err)
		code = 1
	}
	if code != 0 {
		fmt.Fprintf(os.Stderr, "the plane's log:\n%s", planeLogs.String())
	}
	return code
}

// testOptions runs the calculator's catalogue with the bank's personas,
// every listener on a free loopback port.
func testOptions() devplane.Options {
	o := devplane.DefaultOptions()
	for _, addr := range []*string{&o.NATSListen, &o.IdPListen, &o.ApprovalsListen, &o.Listen, &o.AdminListen, &o.DevListen} {
		*addr = "127.0.0.1:0"
	}
	o.Catalogue = filepath.Join("..", "..", "examples", "calculator", "catalogue.yaml")
	o.Personas = filepath.Join("..", "..", "examples", "bank", "personas.yaml")
	o.Services = func(opts ...garmtool.Option) ([]devplane.Service, error) {
		svc := garmtool.New("calc", "0.1.0", opts...)
		if err := calcv1.ServeCalculator(svc, calculator.Calculator{}); err != nil {
			return nil, err
		}
		return []devplane.Service{{Name: "calculator", Package: "calc.v1", Service: svc}}, nil
	}
	o.Logs = planeLogs
	o.Traces = planeTraces
	return o
}

// answer is what a request was answered.
type answer struct {
	status int
	header http.Header
	body   string
}

// send sends a request to url with the Host and headers given (host ""
// keeps the URL's), and answers what came back.
func send(t *testing.T, method, url, host, body string, headers ...string) answer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		t.Fatal(err)
	}
	return answer{status: resp.StatusCode, header: resp.Header, body: string(data)}
}

var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// token is a token of the persona from the plane's IdP.
func token(t *testing.T, persona string) string {
	t.Helper()
	a := send(t, http.MethodGet, plane.URLs().IdP+"/token?user="+persona, "", "")
	if a.status != http.StatusOK {
		t.Fatalf("a token for %s: %d %s", persona, a.status, a.body)
	}
	return a.body
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
