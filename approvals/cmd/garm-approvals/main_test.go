package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestFlagsThatMakeNoConfigurationReportEveryProblemAtOnce(t *testing.T) {
	var stderr bytes.Buffer
	code := run(t.Context(), []string{"--base-url", "ftp://x/", "--oidc-client-id", ""}, &stderr)
	if code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	for _, want := range []string{"--base-url", "--key", "--grant-audience", "--oidc-issuer", "--oidc-client-id", "--subject-claim", "--nats"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("the report does not name %s:\n%s", want, stderr.String())
		}
	}
}
