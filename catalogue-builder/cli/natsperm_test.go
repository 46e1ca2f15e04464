package cli_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/cli"
)

func TestNATSPermissionsPrintsBothFormsOfTheCataloguesPermissions(t *testing.T) {
	out := filepath.Join(t.TempDir(), "calc.binpb")
	if code, _, stderr := run(t, "build", "-f", calculatorManifest, "-o", out); code != cli.ExitOK {
		t.Fatalf("build: exit %d: %s", code, stderr)
	}
	code, conf, stderr := run(t, "nats-permissions", out)
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, line := range []string{"GARM_GARMD = {", "GARM_TOOL_CALC_V1 = {", `"calc.v1.Calculator.Add calc.v1.Calculator"`} {
		if !strings.Contains(conf, line) {
			t.Errorf("the conf form has no line %q:\n%s", line, conf)
		}
	}
	code, js, stderr := run(t, "nats-permissions", "--format", "json", out)
	if code != cli.ExitOK {
		t.Fatalf("--format json: exit %d: %s", code, stderr)
	}
	var doc struct {
		Users []struct{ Name string } `json:"users"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatalf("--format json is not JSON: %v\n%s", err, js)
	}
	if len(doc.Users) != 2 || doc.Users[0].Name != "garmd" || doc.Users[1].Name != "tool_calc_v1" {
		t.Errorf("users %+v, want garmd and tool_calc_v1", doc.Users)
	}
}

func TestNATSPermissionsRefusesAnUnknownFormat(t *testing.T) {
	code, _, stderr := run(t, "nats-permissions", "--format", "yaml", "whatever.binpb")
	if code != cli.ExitUsage || !strings.Contains(stderr, `--format "yaml"`) {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

// TestNATSPermissionsWithApprovalsAddsTheApprovalsServicesUser: the
// operators' recipe gives garm-approvals its variable from this file, as it
// gives garmd and the tools theirs.
func TestNATSPermissionsWithApprovalsAddsTheApprovalsServicesUser(t *testing.T) {
	out := filepath.Join(t.TempDir(), "calc.binpb")
	if code, _, stderr := run(t, "build", "-f", calculatorManifest, "-o", out); code != cli.ExitOK {
		t.Fatalf("build: exit %d: %s", code, stderr)
	}
	code, conf, stderr := run(t, "nats-permissions", "--approvals", out)
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, line := range []string{`{ user = "approvals", password = "<bcrypt hash>", permissions = $GARM_APPROVALS }`, "GARM_APPROVALS = {", `"$KV.GARM_APPROVALS.dec.>"`, "GARM_GARMD = {"} {
		if !strings.Contains(conf, line) {
			t.Errorf("the conf form has no line %q:\n%s", line, conf)
		}
	}
	if _, without, _ := run(t, "nats-permissions", out); strings.Contains(without, "GARM_APPROVALS = {") {
		t.Error("without --approvals the file defines the approvals service's permissions")
	}
}
