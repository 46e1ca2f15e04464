package main

import (
	"bytes"
	"context"
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
const waitTimeout = 60 * time.Second

// repoFile is a file of this repository, from this package's directory.
func repoFile(parts ...string) string {
	return filepath.Join(append([]string{"..", ".."}, parts...)...)
}

// calculatorCatalogue copies the calculator's manifest and protos into a
// temporary directory, as an author's own module would hold them, and
// answers the manifest and the proto file.
func calculatorCatalogue(t *testing.T) (manifest, protoFile string) {
	t.Helper()
	dir := t.TempDir()
	src, err := os.ReadFile(repoFile("examples", "calculator", "proto", "calc", "v1", "calc.proto"))
	if err != nil {
		t.Fatal(err)
	}
	protoFile = filepath.Join(dir, "proto", "calc", "v1", "calc.proto")
	if err := os.MkdirAll(filepath.Dir(protoFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(protoFile, src, 0o644); err != nil {
		t.Fatal(err)
	}
	manifest = filepath.Join(dir, "catalogue.yaml")
	if err := os.WriteFile(manifest, []byte("schema: v1\nname: calculator\nsource: test\ninclude:\n  - proto\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return manifest, protoFile
}

// startPlane runs the dev plane on manifest with the bank's personas and
// the calculator served in process, every listener on a free loopback
// port, and closes it when the test ends.
func startPlane(t *testing.T, manifest string) *devplane.Plane {
	t.Helper()
	return startPlaneOn(t, manifest, repoFile("examples", "bank", "personas.yaml"), func(opts ...garmtool.Option) ([]devplane.Service, error) {
		svc := garmtool.New("calc", "0.1.0", opts...)
		if err := calcv1.ServeCalculator(svc, calculator.Calculator{}); err != nil {
			return nil, err
		}
		return []devplane.Service{{Name: "calculator", Package: "calc.v1", Service: svc}}, nil
	})
}

// startPlaneOn runs the dev plane as `garm dev` does, on manifest with
// personas and the tool services services serves in process (nil: the
// author runs their own), every listener on a free loopback port, and
// closes it when the test ends.
func startPlaneOn(t *testing.T, manifest, personas string, services func(...garmtool.Option) ([]devplane.Service, error)) *devplane.Plane {
	t.Helper()
	o := devplane.DefaultOptions()
	o.NATSListen, o.IdPListen, o.Listen, o.AdminListen, o.DevListen = "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"
	o.ApprovalsListen = "127.0.0.1:0"
	o.Catalogue = manifest
	o.Personas = personas
	o.Services = services
	logs := &syncBuffer{}
	o.Logs = logs
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	p, err := devplane.Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
		defer cancel()
		if err := p.Close(ctx); err != nil {
			t.Errorf("closing the plane: %v", err)
		}
		if t.Failed() {
			t.Logf("the plane's log:\n%s", logs.String())
		}
	})
	return p
}

// garm runs the command line against the plane's URLs and answers its
// exit code and output.
func garm(t *testing.T, p *devplane.Plane, args ...string) (int, string) {
	t.Helper()
	u := p.URLs()
	t.Setenv("GARM_URL", u.Garmd)
	t.Setenv("GARM_IDP", u.IdP)
	t.Setenv("GARM_DEV", u.Dev)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	var out bytes.Buffer
	code := run(ctx, args, &out, &out)
	return code, out.String()
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

func mustContain(t *testing.T, text string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(text, want) {
			t.Errorf("the output lacks %q:\n%s", want, text)
		}
	}
}
