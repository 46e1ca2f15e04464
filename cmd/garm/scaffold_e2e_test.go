package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/garm-dev/garm/catalogue-builder/natsperm"
)

// TestTheAuthorsPathBuildsTestsAndCataloguesAFreshScaffold is the author's
// first hour against this checkout: garm new (which writes the generated
// code), go build, the scaffold's own tests, and a catalogue build. It runs
// offline: the scaffold's go.sum is seeded from this module's and buf's, the
// module proxy is off, and -mod=mod lets go complete the scaffold's go.mod
// from the module cache, as `go mod tidy` would online.
func TestTheAuthorsPathBuildsTestsAndCataloguesAFreshScaffold(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is not on PATH: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "hr")
	var out bytes.Buffer
	if code := run(ctx, []string{"new", "toolservice", "hr", "--dir", dir, "--replace", repoFile(".")}, &out, &out); code != exitOK {
		t.Fatalf("garm new: exit %d:\n%s", code, out.String())
	}
	for _, f := range []string{"gen/hr/v1/hr.pb.go", "gen/hr/v1/hrv1_garm.pb.go", "gen/hr/v1/hr_v1.garm.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("garm new wrote no %s: %v", f, err)
		}
	}
	seedGoSum(t, ctx, goBin, dir)

	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	for _, args := range [][]string{{"build", "./..."}, {"test", "-count=1", "./..."}} {
		cmd := exec.CommandContext(ctx, goBin, args...)
		cmd.Dir, cmd.Env = dir, env
		if combined, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s in the scaffold: %v\n%s", strings.Join(args, " "), err, combined)
		}
	}
	out.Reset()
	artifact := filepath.Join(t.TempDir(), "hr.binpb")
	if code := run(ctx, []string{"catalogue", "build", "-f", filepath.Join(dir, "catalogue.yaml"), "-o", artifact}, &out, &out); code != exitOK {
		t.Fatalf("garm catalogue build: exit %d:\n%s", code, out.String())
	}
	if info, err := os.Stat(artifact); err != nil || info.Size() == 0 {
		t.Errorf("garm catalogue build wrote no artifact: %v", err)
	}

	// garm dev on the scaffold's catalogue and personas, the author's own
	// process serving the tools on the printed bus, and garm call.
	p := startPlaneOn(t, filepath.Join(dir, "catalogue.yaml"), filepath.Join(dir, "personas.yaml"), nil)
	bin := filepath.Join(t.TempDir(), "hr")
	build := exec.CommandContext(ctx, goBin, "build", "-o", bin, ".")
	build.Dir, build.Env = dir, env
	if combined, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build of the scaffold's main: %v\n%s", err, combined)
	}
	urls := p.URLs()
	seed := filepath.Join(urls.NATSSeeds, natsperm.ToolUser("hr.v1")+".nk")
	service := exec.CommandContext(ctx, bin, "--nats", urls.NATS, "--nats-nkey", seed)
	var serviceLog syncBuffer
	service.Stdout, service.Stderr = &serviceLog, &serviceLog
	if err := service.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = service.Process.Signal(syscall.SIGTERM)
		_ = service.Wait()
		if t.Failed() {
			t.Logf("the scaffold's service:\n%s", serviceLog.String())
		}
	})
	var code int
	var answer string
	for deadline := time.Now().Add(waitTimeout); ; {
		code, answer = garm(t, p, "call", "hr.v1.get_employee", "--as", "alice", `{"employee_id": "E-1001"}`)
		if code == exitOK || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond) // the service is still connecting: the call answers 503
	}
	if code != exitOK {
		t.Fatalf("garm call of the scaffold's read tool: exit %d:\n%s", code, answer)
	}
	mustContain(t, answer, "HTTP 200", "ledger ok")
	// bob, an employee, sees the email's domain only.
	if code, answer = garm(t, p, "call", "hr.v1.get_employee", "--as", "bob", `{"employee_id": "E-1001"}`); code != exitOK || !strings.Contains(answer, "***@") {
		t.Fatalf("garm call as bob: exit %d:\n%s", code, answer)
	}
}

// seedGoSum writes the scaffold's go.sum from this module's and buf's
// (its go.mod pins buf as a tool), both in the module cache already.
func seedGoSum(t *testing.T, ctx context.Context, goBin, dir string) {
	t.Helper()
	modcache, err := exec.CommandContext(ctx, goBin, "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOMODCACHE: %v", err)
	}
	var sums []byte
	for _, f := range []string{repoFile("go.sum"), filepath.Join(strings.TrimSpace(string(modcache)), "github.com", "bufbuild", "buf@"+scaffoldBufVersion, "go.sum")} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("seeding the scaffold's go.sum: %v (run `go mod download github.com/bufbuild/buf@%s` once)", err, scaffoldBufVersion)
		}
		sums = append(sums, data...)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sums, 0o644); err != nil {
		t.Fatal(err)
	}
}
