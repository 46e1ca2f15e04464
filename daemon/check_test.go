package garmd_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/builder"
	garmd "github.com/garm-dev/garm/daemon"
)

func TestCheckSaysAServableCatalogueWouldMount(t *testing.T) {
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
	for _, want := range []string{"12 tools:", "calc.v1.add VERB_READ", "fix.v1.rename VERB_WRITE", "would mount"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("check output lacks %q:\n%s", want, out.String())
		}
	}
	if err := garmd.Check(&out, garmd.CheckConfig{Catalogue: path, MaxTools: 5}); err == nil || !strings.Contains(err.Error(), "5") {
		t.Errorf("--max-tools 5 did not refuse 9 tools: %v", err)
	}
}

func TestCheckNamesEveryDeclarationThisBuildCannotEnforce(t *testing.T) {
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
	for _, want := range []string{"pay.v1.send", "MODE_GRANT", "LEVEL_AUDIT", "pay.v1.tell", "MODE_NOTIFY"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not name %q: %v", want, err)
		}
	}
}

func TestGarmdRefusesToStartOnACatalogueThatWouldNotMount(t *testing.T) {
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
