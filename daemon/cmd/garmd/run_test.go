package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/builder"
)

func runGarmd(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestVersionAndUsage(t *testing.T) {
	if code, out, _ := runGarmd("version"); code != exitOK || !strings.HasPrefix(out, "garmd ") {
		t.Fatalf("version: %d %q", code, out)
	}
	if code, _, errOut := runGarmd(); code != exitUsage || !strings.Contains(errOut, "garmd serve") {
		t.Fatalf("no command: %d %q", code, errOut)
	}
	if code, _, _ := runGarmd("launch"); code != exitUsage {
		t.Fatalf("unknown command: %d", code)
	}
	if code, _, _ := runGarmd("serve", "--no-such-flag"); code != exitUsage {
		t.Fatalf("unknown flag: %d", code)
	}
	if code, _, errOut := runGarmd("serve", "--help"); code != exitOK || !strings.Contains(errOut, "-hash-key-file") {
		t.Fatalf("serve --help: %d %q", code, errOut)
	}
}

func TestServeReportsEveryConfigurationProblemAndExitsOne(t *testing.T) {
	code, _, errOut := runGarmd("serve", "--catalogue", filepath.Join(t.TempDir(), "none.binpb"), "--tool-timeout", "0s")
	if code != exitFailed {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"--catalogue", "--issuer is required", "--hash-key-file is required", "--tool-timeout"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}

func TestServeTakesAnS3CatalogueAndItsPoll(t *testing.T) {
	code, _, errOut := runGarmd("serve", "--catalogue", "s3://catalogues", "--catalogue-poll", "-1s")
	if code != exitFailed {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"--catalogue: s3 URL: the key is missing", "--catalogue-poll -1s is negative"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if _, _, errOut := runGarmd("serve", "--help"); !strings.Contains(errOut, "-catalogue-poll") {
		t.Errorf("serve --help does not list --catalogue-poll:\n%s", errOut)
	}
}

func TestCheckExitsZeroForAMountableCatalogue(t *testing.T) {
	c, err := builder.FromRoots(context.Background(), "../../../examples/calculator/proto")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "c.binpb")
	if err := os.WriteFile(path, c.Bytes, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runGarmd("check", "--catalogue", path); code != exitOK || !strings.Contains(out, "would mount") {
		t.Fatalf("%d %q %q", code, out, errOut)
	}
	if code, _, _ := runGarmd("check"); code != exitUsage {
		t.Fatalf("check without a catalogue: %d", code)
	}
	garbage := filepath.Join(t.TempDir(), "garbage.binpb")
	_ = os.WriteFile(garbage, []byte("not a catalogue"), 0o600)
	if code, _, errOut := runGarmd("check", "--catalogue", garbage); code != exitFailed || !strings.Contains(errOut, "does not load") {
		t.Fatalf("garbage: %d %q", code, errOut)
	}
}
