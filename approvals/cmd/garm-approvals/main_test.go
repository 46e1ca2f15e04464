package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

func TestFlagsThatMakeNoConfigurationReportEveryProblemAtOnce(t *testing.T) {
	var stderr bytes.Buffer
	code := run(t.Context(), []string{"--base-url", "ftp://x/", "--oidc-client-id", "", "--nats", "nats://u:hunter2@bus:4222", "--nats-tls-cert", "cert.pem"}, &stderr)
	if code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	for _, want := range []string{"--base-url", "--key", "--grant-audience", "--oidc-issuer", "--oidc-client-id", "--subject-claim", "--nats carries credentials", "--nats-tls-cert and --nats-tls-key go together"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("the report does not name %s:\n%s", want, stderr.String())
		}
	}
}

// TestVersionPrintsTheStampedVersion: make install and make image stamp
// approvals.version as they stamp garmd's; unstamped, a test binary is dev.
func TestVersionPrintsTheStampedVersion(t *testing.T) {
	var out, stderr bytes.Buffer
	stdout = &out
	t.Cleanup(func() { stdout = os.Stdout })
	if code := run(t.Context(), []string{"version"}, &stderr); code != 0 || out.String() != "garm-approvals dev\n" {
		t.Errorf("version: exit %d, %q %q", code, out.String(), stderr.String())
	}
}
