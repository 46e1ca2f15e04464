package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/catalogue-builder/cli"
)

// buildShop builds the shop fixture of the build package, with its
// orders.proto edited, into a file and returns the file's path.
func buildShop(t *testing.T, old, new string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../internal/build/testdata/shop")); err != nil {
		t.Fatal(err)
	}
	orders := filepath.Join(dir, "tools", "shop", "v1", "orders.proto")
	raw, err := os.ReadFile(orders)
	if err != nil || !strings.Contains(string(raw), old) {
		t.Fatalf("orders.proto lacks %q (%v)", old, err)
	}
	if err := os.WriteFile(orders, []byte(strings.Replace(string(raw), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "catalogue.yaml"), []byte("schema: v1\ninclude: [tools, shared]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "shop.binpb")
	if code, _, stderr := run(t, "build", "-f", filepath.Join(dir, "catalogue.yaml"), "-o", out); code != cli.ExitOK {
		t.Fatalf("build: exit %d: %s", code, stderr)
	}
	return out
}

func TestDiffFailsOnWideningOnlyWhenAsked(t *testing.T) {
	strict := buildShop(t, "", "")
	loose := buildShop(t, "read: CLEARANCE_CONFIDENTIAL", "read: CLEARANCE_INTERNAL")

	code, stdout, stderr := run(t, "diff", strict, loose)
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if want := "widening: shop.v1.cancel_order: output field email readable at INTERNAL, was CONFIDENTIAL"; !strings.Contains(stdout, want) {
		t.Fatalf("stdout lacks %q:\n%s", want, stdout)
	}
	if code, _, stderr := run(t, "diff", strict, loose, "--fail-on-widening"); code != cli.ExitRefused || !strings.Contains(stderr, "widens access") {
		t.Fatalf("--fail-on-widening: exit %d: %s", code, stderr)
	}
	// The same change read backwards narrows: the gate lets it through.
	code, stdout, _ = run(t, "diff", "--fail-on-widening", loose, strict)
	if code != cli.ExitOK || !strings.HasPrefix(stdout, "narrowing: ") {
		t.Fatalf("exit %d:\n%s", code, stdout)
	}
	code, stdout, stderr = run(t, "diff", strict, strict, "--fail-on-widening")
	if code != cli.ExitOK || stdout != "" || !strings.Contains(stderr, "no policy difference") {
		t.Fatalf("identical: exit %d\n%s%s", code, stdout, stderr)
	}
}

func TestInspectShowsTheDigestAsTextAndJSON(t *testing.T) {
	path := buildShop(t, "", "")
	a, err := artifact.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, "inspect", path)
	if code != cli.ExitOK || !strings.Contains(stdout, a.Digest) || !strings.Contains(stdout, "shop.v1.get_order") {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = run(t, "inspect", "--json", path)
	var view struct {
		Digest string `json:"digest"`
	}
	if code != cli.ExitOK || json.Unmarshal([]byte(stdout), &view) != nil || view.Digest != a.Digest {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
}

func TestReadingSomethingThatIsNotACatalogueRefuses(t *testing.T) {
	garbage := filepath.Join(t.TempDir(), "garbage.binpb")
	if err := os.WriteFile(garbage, []byte("\x0a\x03abc garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"inspect", garbage}, {"diff", garbage, garbage}, {"inspect", garbage + ".missing"}} {
		if code, _, stderr := run(t, args...); code != cli.ExitRefused || stderr == "" {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
	}
}
