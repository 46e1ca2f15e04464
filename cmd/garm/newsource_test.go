package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGarmNewsUsageLineListsEveryFlagItTakes(t *testing.T) {
	t.Parallel()
	var stderr, help bytes.Buffer
	if code := run(context.Background(), []string{"new"}, &stderr, &stderr); code != exitUsage {
		t.Fatalf("garm new alone: exit %d", code)
	}
	run(context.Background(), []string{"--help"}, &help, &help)
	newFlagSet(new(newOptions)).VisitAll(func(f *flag.Flag) {
		if !strings.Contains(stderr.String(), "[--"+f.Name+" ") {
			t.Errorf("garm new's usage does not list --%s:\n%s", f.Name, stderr.String())
		}
		if !strings.Contains(help.String(), "[--"+f.Name+" ") {
			t.Errorf("garm --help does not list garm new's --%s:\n%s", f.Name, help.String())
		}
	})
}

// A test binary is built from this checkout, as make install's garm is:
// without --replace, the scaffold's go.mod points at the checkout, and the
// output says the scaffold is tied to that path.
func TestAGarmBuiltFromACheckoutWritesAScaffoldThatReplacesGarmWithItAndSaysSo(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "hr")
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"new", "toolservice", "hr", "--dir", dir}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d:\n%s%s", code, stdout.String(), stderr.String())
	}
	checkout, err := filepath.Abs(repoFile("."))
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(gomod), "replace "+garmModule+" => "+checkout+"\n") {
		t.Errorf("go.mod does not replace garm with the checkout %s:\n%s", checkout, gomod)
	}
	if !strings.Contains(stdout.String(), checkout+", the checkout this garm was built from") {
		t.Errorf("the output does not say the scaffold is tied to %s:\n%s", checkout, stdout.String())
	}
	if stderr.Len() > 0 {
		t.Errorf("a scaffold that builds was written with a warning:\n%s", stderr.String())
	}
}

// A garm whose checkout cannot be found (moved, or a build nobody stamped)
// says exactly what to run before go mod tidy, and lists it first.
func TestAGarmThatCannotFindItsCheckoutSaysWhatToRunBeforeGoModTidy(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "hr")
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"new", "toolservice", "hr", "--dir", dir, "--replace="}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d:\n%s%s", code, stdout.String(), stderr.String())
	}
	fix := "go mod edit -replace " + garmModule + "=/path/to/your/garm/checkout\n  go mod tidy"
	if !strings.Contains(stdout.String(), fix) {
		t.Errorf("the next steps do not begin with the replace go mod tidy needs:\n%s", stdout.String())
	}
	if !strings.Contains(stderr.String(), "go mod tidy fails until") {
		t.Errorf("no warning that go mod tidy fails:\n%s", stderr.String())
	}
}

func TestBuiltFromTakesTheStampedCheckoutOnlyWhileItHoldsGarm(t *testing.T) {
	t.Parallel()
	stamped := t.TempDir()
	if _, ok := firstCheckout([]string{stamped}); ok {
		t.Errorf("a directory without garm's go.mod was taken for a checkout")
	}
	if err := os.WriteFile(filepath.Join(stamped, "go.mod"), []byte("module example.com/other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := firstCheckout([]string{stamped}); ok {
		t.Errorf("another module was taken for garm's checkout")
	}
	if err := os.WriteFile(filepath.Join(stamped, "go.mod"), []byte("module "+garmModule+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, ok := firstCheckout([]string{"", stamped, repoFile(".")}); !ok || got != stamped {
		t.Errorf("got %q, %v; want the stamped %s first", got, ok, stamped)
	}
}

func TestOnlyATaggedCleanVersionIsARelease(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]bool{
		"v0.4.0":                               true,
		"v0.4.0+dirty":                         false,
		"v0.0.0-20261205021958-92762ca5d1e0":   false,
		"v0.4.1-0.20261205021958-92762ca5d1e0": false,
		"(devel)":                              false,
		"":                                     false,
	} {
		if got := isRelease(v); got != want {
			t.Errorf("isRelease(%q) = %v, want %v", v, got, want)
		}
	}
}
