package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTheConfigFileSetsFlagsThatFlagsOverrideAndUnknownKeysAreNamed(t *testing.T) {
	file := filepath.Join(t.TempDir(), "garm-approvals.yaml")
	if err := os.WriteFile(file, []byte("listen: 127.0.0.1:9000\nmax-sessions: 5\nbase_url: https://x\nnats: nats://u:hunter2@bus:4222\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GARM_APPROVALS_KEY_FILE", "/run/credentials/grant-key.pem")
	var out, stderr bytes.Buffer
	stdout = &out
	t.Cleanup(func() { stdout = os.Stdout })
	code := run(t.Context(), []string{"config", "--config", file, "--max-sessions", "6"}, &stderr)
	if code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	for _, want := range []string{"listen: 127.0.0.1:9000\n", "max-sessions: 6\n", "key: /run/credentials/grant-key.pem\n", "nats: nats://REDACTED@bus:4222\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the configuration lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String()+stderr.String(), "hunter2") {
		t.Errorf("a URL's password was printed:\n%s\n%s", out.String(), stderr.String())
	}
	for _, want := range []string{`:3: unknown key "base_url"`, "--base-url", "--grant-audience"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, stderr.String())
		}
	}
}
