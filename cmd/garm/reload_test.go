package main

import (
	"context"
	"os"
	"strings"
	"testing"
)

func TestAReloadThatDoesNotLintReportsTheDiagnosticsAndKeepsServingThePreviousCatalogue(t *testing.T) {
	manifest, protoFile := calculatorCatalogue(t)
	p := startPlane(t, manifest)
	src, err := os.ReadFile(protoFile)
	if err != nil {
		t.Fatal(err)
	}
	// Without its default field policy, AddRequest's fields declare none:
	// lint refuses each of them.
	broken := strings.Replace(string(src), "  option (garm.tool.v1.default_field_policy) = {read: CLEARANCE_PUBLIC};\n", "", 1)
	if broken == string(src) {
		t.Fatal("the calculator's proto changed; this test no longer breaks it")
	}
	if err := os.WriteFile(protoFile, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	err = p.Reload(ctx)
	if err == nil {
		t.Fatal("a catalogue that does not lint was served")
	}
	if !strings.Contains(err.Error(), "L1: calc.v1.Calculator.Add(input).a") {
		t.Errorf("the refusal does not carry the diagnostics: %v", err)
	}
	if code, out := garm(t, p, "call", "calc.v1.add", "--as", "outsider", `{"a": 1, "b": 2}`); code != exitOK {
		t.Fatalf("the previous catalogue is no longer served: exit %d\n%s", code, out)
	}

	renamed := strings.Replace(string(src), `title: "Add two numbers"`, `title: "Add two numbers" name: "plus"`, 1)
	if err := os.WriteFile(protoFile, []byte(renamed), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := p.Reload(ctx); err != nil {
		t.Fatalf("a catalogue that lints was refused: %v", err)
	}
	if code, out := garm(t, p, "call", "calc.v1.plus", "--as", "outsider", `{"a": 1, "b": 2}`); code != exitOK {
		t.Fatalf("the new catalogue is not served: exit %d\n%s", code, out)
	}
	if !strings.Contains(p.QuickStart(), "calc.v1.plus") {
		t.Errorf("the quick-start was not rendered again:\n%s", p.QuickStart())
	}
}
