package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestGarmSealerReportsEveryMissingFlagAtOnce(t *testing.T) {
	t.Parallel()
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"--every-rows", "0"}, &stderr)
	if code != 2 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"--nats is required", "--key is required", "--every-rows and --every must be positive"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr.String())
		}
	}
}
