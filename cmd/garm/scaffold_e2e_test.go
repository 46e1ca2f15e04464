package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTheAuthorsPathBuildsTestsAndCataloguesAFreshScaffold is the author's
// first hour against this checkout: garm new (which writes the generated
// code), go build, the scaffold's own tests, and a catalogue build. It runs
// offline: the scaffold's go.sum is seeded from this module's and buf's, the
// module proxy is off, and -mod=mod lets go complete the scaffold's go.mod
// from the module cache, as `go mod tidy` would online.
func TestTheAuthorsPathBuildsTestsAndCataloguesAFreshScaffold(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and tests a whole scaffold with the go command; run without -short")
	}
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
