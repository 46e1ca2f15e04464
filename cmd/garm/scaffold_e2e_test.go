package main

import (
	"bytes"
	"context"
	"io/fs"
	"maps"
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
// code), `go tool buf generate` (which must write the same bytes), go build,
// the scaffold's own tests, a catalogue build, garm dev with the scaffold's
// own process and garm call, then an edit of the proto regenerated and
// rebuilt.
//
// It runs without the network (decision 0075): the module proxy is off,
// the scaffold's go.sum is this repository's committed go.sum and
// tools/go.sum (so every module is checked against a hash in review, and
// the checksum database is never asked), and -mod=mod lets the go command
// complete the scaffold's go.mod from the module cache, as `go mod tidy`
// would online. `make tools` builds tools/go.mod, the same generators from
// the same module graph, which puts every module the scaffold needs into
// the module cache.
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
	written := readTree(t, filepath.Join(dir, "gen"))
	for _, f := range []string{"hr/v1/hr.pb.go", "hr/v1/hrv1_garm.pb.go", "hr/v1/hr_v1.garm.json"} {
		if _, ok := written[f]; !ok {
			t.Errorf("garm new wrote no gen/%s", f)
		}
	}
	seedGoSum(t, dir)

	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	goIn := func(args ...string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, goBin, args...)
		cmd.Dir, cmd.Env = dir, env
		if combined, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s in the scaffold: %v\n%s", strings.Join(args, " "), err, combined)
		}
	}
	// `go tool` reads go.mod as it is; building the tools completes it.
	goIn("build", "tool")
	goIn("tool", "buf", "generate")
	if regenerated := readTree(t, filepath.Join(dir, "gen")); !maps.EqualFunc(written, regenerated, bytes.Equal) {
		for name := range regenerated {
			if !bytes.Equal(written[name], regenerated[name]) {
				t.Errorf("go tool buf generate wrote gen/%s other than garm new:\n%s", name, regenerated[name])
			}
		}
		t.Fatalf("go tool buf generate wrote %d files, garm new %d, not the same bytes", len(regenerated), len(written))
	}
	goIn("build", "./...")
	goIn("test", "-count=1", "./...")
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
	// Its quick-start: the service's command line, a token per persona,
	// a call per tool.
	mustContain(t, p.QuickStart(), "go run . --nats ", "garm token alice\n", "garm token bob\n", "garm token alice --agent helper\n",
		"garm call hr.v1.get_employee --as alice", "garm call hr.v1.update_title --as alice",
		"export GARM_URL="+p.URLs().Garmd+" GARM_IDP="+p.URLs().IdP+" GARM_DEV="+p.URLs().Dev+"\n")
	bin := filepath.Join(t.TempDir(), "hr")
	goIn("build", "-o", bin, ".")
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

	// The author adds a field: go tool buf generate writes it, and the
	// module still builds.
	protoFile := filepath.Join(dir, "proto", "hr", "v1", "hr.proto")
	source, err := os.ReadFile(protoFile)
	if err != nil {
		t.Fatal(err)
	}
	const title = "  optional string title = 3;\n"
	if !bytes.Contains(source, []byte(title)) {
		t.Fatalf("the scaffold's proto has no %q to add a field after:\n%s", title, source)
	}
	source = bytes.Replace(source, []byte(title), []byte(title+"  // The employee's department.\n  optional string department = 5;\n"), 1)
	if err := os.WriteFile(protoFile, source, 0o644); err != nil {
		t.Fatal(err)
	}
	goIn("tool", "buf", "generate")
	edited := readTree(t, filepath.Join(dir, "gen"))
	for name, want := range map[string]string{"hr/v1/hr.pb.go": "func (x *GetEmployeeResponse) GetDepartment() string", "hr/v1/hr_v1.garm.json": `"department"`} {
		if bytes.Equal(edited[name], written[name]) || !bytes.Contains(edited[name], []byte(want)) {
			t.Errorf("after adding a field, go tool buf generate's gen/%s lacks %s", name, want)
		}
	}
	goIn("build", "./...")
}

// readTree reads every file under dir, by its slash-separated path
// relative to dir.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		files[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// seedGoSum writes the scaffold's go.sum from this repository's committed
// go.sum and tools/go.sum: the hashes of garm's module graph and of the
// generators' (tools/go.mod pins the tools a scaffold pins).
func seedGoSum(t *testing.T, dir string) {
	t.Helper()
	var sums []byte
	for _, f := range []string{repoFile("go.sum"), repoFile("tools", "go.sum")} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("seeding the scaffold's go.sum: %v", err)
		}
		sums = append(sums, data...)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sums, 0o644); err != nil {
		t.Fatal(err)
	}
}
