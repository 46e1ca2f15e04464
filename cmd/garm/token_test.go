package main

import (
	"regexp"
	"strings"
	"testing"
)

// --as names the persona in garm call; in garm token it is a deprecated
// alias of --agent that still works and says what to use.
func TestGarmTokensAsIsADeprecatedAliasOfAgentThatSaysSo(t *testing.T) {
	manifest, _ := calculatorCatalogue(t)
	p := startPlane(t, manifest)
	code, out := garm(t, p, "token", "support", "--as", "assistant")
	if code != exitOK || !regexp.MustCompile(`(?m)^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$`).MatchString(out) {
		t.Fatalf("exit %d, %q", code, out)
	}
	if !strings.Contains(out, "--as is deprecated") || !strings.Contains(out, "use --agent assistant") {
		t.Errorf("no deprecation warning naming --agent:\n%s", out)
	}
	if code, out := garm(t, p, "token", "support", "--as", "assistant", "--agent", "other"); code != exitUsage {
		t.Errorf("--as and --agent naming different agents: exit %d, %q", code, out)
	}
}
