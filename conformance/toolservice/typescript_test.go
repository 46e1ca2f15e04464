package toolservice_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/garm-dev/garm/conformance/toolservice"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/nats-io/nats.go"
)

// tsService is the TypeScript tool service written from docs/hop-contract.md.
var tsService = filepath.Join("..", "..", "examples", "conformance-ts")

// TestTheTypeScriptServicePassesTheWholeKit builds the TypeScript service
// and runs every case against it, lifecycle included.
func TestTheTypeScriptServicePassesTheWholeKit(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node is not installed: apt-get install nodejs npm")
	}
	if _, err := os.Stat(filepath.Join(tsService, "node_modules")); err != nil {
		t.Fatalf("the TypeScript service's packages are not installed: npm ci --prefix examples/conformance-ts (%v)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "npm", "run", "--silent", "build")
	build.Dir = tsService
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("npm run build: %v\n%s", err, out)
	}
	srv := garmtooltest.StartServer(t)
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	cases, err := toolservice.Shipped()
	if err != nil {
		t.Fatal(err)
	}
	start := func(context.Context) (toolservice.Process, error) {
		cmd := exec.Command("node", filepath.Join(tsService, "dist", "main.js"))
		cmd.Env = append(os.Environ(), "NATS_URL="+srv.URL())
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		return execProcess{cmd}, nil
	}
	var out bytes.Buffer
	results, err := toolservice.Run(ctx, toolservice.Config{Conn: nc, Start: start, Out: &out}, cases)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.String())
	if toolservice.Failed(results) || strings.Contains(out.String(), "skip ") {
		t.Fatalf("the TypeScript service does not pass the whole kit:\n%s", out.String())
	}
}

// TestTheTypeScriptServicesGeneratedTypesAreCurrent generates the
// TypeScript message types afresh into a temporary directory and compares
// them with the committed ones.
func TestTheTypeScriptServicesGeneratedTypesAreCurrent(t *testing.T) {
	buf, err := filepath.Abs(filepath.Join("..", "..", ".tmp", "bin", "buf"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(buf); err != nil {
		t.Fatalf("buf is not built: make tools (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(tsService, "node_modules", ".bin", "protoc-gen-es")); err != nil {
		t.Fatalf("protoc-gen-es is not installed: npm ci --prefix examples/conformance-ts (%v)", err)
	}
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, args := range [][]string{
		{"generate", "../../conformance/proto", "--template", "buf.gen.yaml", "--include-imports", "-o", out},
		{"generate", "../../annotations", "--path", "../../annotations/garm/tool/v1/invocation.proto", "--template", "buf.gen.yaml", "--include-imports", "-o", out},
	} {
		cmd := exec.CommandContext(ctx, buf, args...)
		cmd.Dir = tsService
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("buf %v: %v\n%s", args, err, b)
		}
	}
	committed := filepath.Join(tsService, "src", "gen")
	var fresh []string
	err = filepath.WalkDir(filepath.Join(out, "src", "gen"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(filepath.Join(out, "src", "gen"), path)
		fresh = append(fresh, rel)
		want, _ := os.ReadFile(path)
		got, err := os.ReadFile(filepath.Join(committed, rel))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("src/gen/%s is not what protoc-gen-es writes now: npm run --prefix examples/conformance-ts generate", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(fresh) == 0 {
		t.Fatal("buf generated nothing")
	}
}
