package garmd_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/garm-dev/garm/catalogue-builder/builder"
	garmd "github.com/garm-dev/garm/daemon"
)

func TestCheckSaysAServableCatalogueWouldMount(t *testing.T) {
	t.Parallel()
	data, err := fixtureCatalogue()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "c.binpb")
	writeFile(t, path, data)
	var out bytes.Buffer
	if err := garmd.Check(&out, garmd.CheckConfig{Catalogue: path}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"12 tools:", "calc.v1.add VERB_READ", "fix.v1.rename VERB_WRITE", "would mount",
		"instance rules: 0 compiled, on 0 of 12 tools; 0 principal attributes declared",
		"read once from a file at start", "quarantine: not checked here (no bus)", "  fix.v1 ", "  calc.v1 "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("check output lacks %q:\n%s", want, out.String())
		}
	}
	if err := garmd.Check(&out, garmd.CheckConfig{Catalogue: path, MaxTools: 5}); err == nil || !strings.Contains(err.Error(), "5") {
		t.Errorf("--max-tools 5 did not refuse 9 tools: %v", err)
	}
}

func TestCheckNamesEveryDeclarationThisBuildCannotEnforce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "pay.proto"), []byte(`syntax = "proto3";
package pay.v1;
import "garm/tool/v1/tool.proto";
message Req { option (garm.tool.v1.default_field_policy) = {read: CLEARANCE_PUBLIC}; optional string id = 1; }
service Pay {
  rpc Send(Req) returns (Req) { option (garm.tool.v1.tool) = {
    description: "Sends money." verb: VERB_DESTRUCTIVE min_clearance: CLEARANCE_RESTRICTED
    approval: {mode: MODE_GRANT max_grant_age_seconds: 300 approver_min_clearance: CLEARANCE_RESTRICTED}
    audit: {level: LEVEL_AUDIT retain_days: 30 fail_closed: true}
  }; }
  rpc Tell(Req) returns (Req) { option (garm.tool.v1.tool) = {
    description: "Tells someone." verb: VERB_READ min_clearance: CLEARANCE_PUBLIC approval: {mode: MODE_NOTIFY}
  }; }
}
`))
	c, err := builder.FromRoots(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "c.binpb")
	writeFile(t, path, c.Bytes)
	var out bytes.Buffer
	err = garmd.Check(&out, garmd.CheckConfig{Catalogue: path})
	if err == nil || !strings.Contains(out.String(), "would NOT mount") {
		t.Fatalf("a catalogue with grants, notify and audit would mount: %v\n%s", err, out.String())
	}
	for _, want := range []string{
		"tool pay.v1.send declares approval MODE_GRANT, which needs approval grants (step 5), and no grant issuer is configured (--grant-issuer)",
		"tool pay.v1.send declares LEVEL_AUDIT with retain_days 30, which needs an audit sink, and none is configured (--audit-stream-retention)",
		"tool pay.v1.tell declares approval MODE_NOTIFY, which needs notification (step 10), and --notify is off",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q: %v", want, err)
		}
	}

	// The stand-ins turn each step on, as the serving flags would.
	out.Reset()
	short := 24 * time.Hour
	err = garmd.Check(&out, garmd.CheckConfig{Catalogue: path, Grants: true, Notify: true, AuditRetention: &short})
	if err == nil || !strings.Contains(err.Error(), "tool pay.v1.send declares LEVEL_AUDIT with retain_days 30, and the audit stream's asserted retention 24h0m0s does not cover it") ||
		strings.Contains(err.Error(), "MODE_GRANT") || strings.Contains(err.Error(), "MODE_NOTIFY") {
		t.Fatalf("with grants, notify and a one-day audit stream: %v", err)
	}
	out.Reset()
	indefinite := time.Duration(0)
	if err := garmd.Check(&out, garmd.CheckConfig{Catalogue: path, Grants: true, Notify: true, AuditRetention: &indefinite}); err != nil {
		t.Fatalf("with every step on: %v\n%s", err, out.String())
	}
	for _, want := range []string{"approval grants (step 5): on", "notify (step 10): on", "audit sink: on, to GARM_AUDIT, keeping rows indefinitely", "would mount"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("check output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestGarmdRefusesToStartOnACatalogueThatWouldNotMount(t *testing.T) {
	t.Parallel()
	cfg := garmd.DefaultConfig()
	cfg.Catalogue = filepath.Join(t.TempDir(), "missing.binpb")
	key := filepath.Join(t.TempDir(), "k")
	writeFile(t, key, []byte("0123456789abcdef0123"))
	cfg.HashKeyFile = key
	cfg.Issuers, cfg.JWKS = []string{"https://i"}, []string{"https://i/jwks"}
	if err := garmd.Serve(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "missing.binpb") {
		t.Fatalf("%v", err)
	}
}

func TestCheckReportsTheInstanceRulesItCompiled(t *testing.T) {
	t.Parallel()
	c, err := builder.FromRoots(context.Background(), filepath.Join("..", "protoc-gen-garm", "testdata", "instance_rules"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "c.binpb")
	writeFile(t, path, c.Bytes)
	var out bytes.Buffer
	if err := garmd.Check(&out, garmd.CheckConfig{Catalogue: path}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if want := "instance rules: 3 compiled, on 1 of 1 tools; 2 principal attributes declared\nwould mount"; !strings.Contains(out.String(), want) {
		t.Fatalf("check output lacks %q:\n%s", want, out.String())
	}
}
