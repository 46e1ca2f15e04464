package cli_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/catalogue-builder/cli"
)

// run runs the command line and returns its exit code and output.
func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errs bytes.Buffer
	code = cli.Main(context.Background(), args, &out, &errs)
	return code, out.String(), errs.String()
}

const calculatorManifest = "../../examples/calculator/catalogue.yaml"

func TestBuildWritesTheArtifactAndSaysWhatItHolds(t *testing.T) {
	out := filepath.Join(t.TempDir(), "calc.binpb")
	code, stdout, stderr := run(t, "build", "-f", calculatorManifest, "-o", out)
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	a, err := artifact.Read(data)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"wrote " + out,
		"3 tools, 1 package, 7 files, 12 documented fields, annotation schema version 1",
		a.Digest,
		"calc.v1.add",
		"calc.v1.divide",
		"calc.v1.summarize",
	}, "\n") + "\n"
	if stdout != want {
		t.Fatalf("stdout:\n%s\nwant:\n%s", stdout, want)
	}
	if got := a.Catalogue.GetProvenance().GetProducer(); got != cli.Producer() || !strings.HasPrefix(got, "garm-catalogue/") {
		t.Errorf("producer %q", got)
	}
	if got := a.Catalogue.GetProvenance().GetSource(); got != "github.com/garm-dev/garm/examples/calculator" {
		t.Errorf("source %q", got)
	}
	if !strings.HasPrefix(a.Catalogue.GetProvenance().GetCompiler(), "protocompile") {
		t.Errorf("compiler %q", a.Catalogue.GetProvenance().GetCompiler())
	}
}

func TestBuildStampsTheTimeOnlyWhenAsked(t *testing.T) {
	dir := t.TempDir()
	for _, stamp := range []bool{false, true} {
		out := filepath.Join(dir, "calc.binpb")
		args := []string{"build", "-f", calculatorManifest, "-o", out}
		if stamp {
			args = append(args, "--stamp")
		}
		if code, _, stderr := run(t, args...); code != cli.ExitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		a, err := artifact.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if got := a.Catalogue.GetProvenance().GetBuiltAt() != nil; got != stamp {
			t.Errorf("--stamp=%v: built_at recorded %v", stamp, got)
		}
	}
}

func TestLintChecksWithoutWriting(t *testing.T) {
	manifest, err := filepath.Abs(calculatorManifest)
	dir := t.TempDir()
	t.Chdir(dir)
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, "lint", "-f", manifest)
	if code != cli.ExitOK || !strings.HasPrefix(stdout, "ok: 3 tools") {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("lint wrote %v", entries)
	}
}
