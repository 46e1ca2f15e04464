package garmd_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	garmd "github.com/garm-dev/garm/daemon"
)

func TestValidateReportsEveryProblemAtOnce(t *testing.T) {
	t.Parallel()
	short := filepath.Join(t.TempDir(), "short.key")
	if err := os.WriteFile(short, []byte("  too short \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := garmd.DefaultConfig()
	cfg.NATS = "http://127.0.0.1:4222"
	cfg.Issuers = []string{"https://a.example", "https://a.example"}
	cfg.JWKS = []string{"http://keys.example.com/jwks.json"}
	cfg.HashKeyFile = short
	cfg.ToolTimeout = 0
	cfg.MaxTools = -1
	cfg.Audience = " "
	cfg.GOGC = "lots"
	err := cfg.Validate()
	var ce *garmd.ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("%v", err)
	}
	for _, want := range []string{
		"--catalogue is required",
		"--nats",
		"2 --issuer and 1 --jwks",
		`--issuer "https://a.example" is given twice`,
		"over https",
		"--audience is empty",
		"holds 9 bytes of key",
		"--tool-timeout",
		"--max-tools -1",
		`--gogc "lots"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the problems do not mention %q:\n%v", want, err)
		}
	}
	if len(ce.Problems) != 10 {
		t.Errorf("%d problems, want 10:\n%v", len(ce.Problems), err)
	}
}

func TestTheDefaultsAreTheSpecs(t *testing.T) {
	t.Parallel()
	cfg := garmd.DefaultConfig()
	if cfg.NATS != "nats://127.0.0.1:4222" || cfg.Listen != "127.0.0.1:7440" || cfg.AdminListen != "127.0.0.1:7441" ||
		cfg.Audience != "garm" || cfg.ToolTimeout != 30*time.Second || cfg.MaxTools != 0 || cfg.LedgerStream ||
		cfg.GOGC != "auto" {
		t.Fatalf("%+v", cfg)
	}
}

func TestJWKSOverPlainHTTPIsAcceptedOnlyFromLoopback(t *testing.T) {
	t.Parallel()
	for url, ok := range map[string]bool{
		"https://idp.example/jwks.json":   true,
		"http://127.0.0.1:7450/jwks.json": true,
		"http://localhost:7450/jwks.json": true,
		"http://[::1]:7450/jwks.json":     true,
		"http://idp.example/jwks.json":    false,
		"http://10.0.0.1/jwks.json":       false,
		"ftp://idp.example/jwks.json":     false,
		"/relative/jwks.json":             false,
	} {
		cfg := garmd.DefaultConfig()
		cfg.Issuers, cfg.JWKS = []string{"https://i"}, []string{url}
		err := cfg.Validate()
		if got := err == nil || !strings.Contains(err.Error(), "--jwks"); got != ok {
			t.Errorf("%s: accepted=%v, want %v (%v)", url, got, ok, err)
		}
	}
}

func TestTheGrantFlagsDefaultAsTheSpecSaysAndRefuseWhatCannotWork(t *testing.T) {
	t.Parallel()
	one := garmd.DefaultConfig()
	one.Issuers, one.JWKS = []string{"https://i"}, []string{"https://i/jwks.json"}
	one.GrantIssuer = "https://approvals"
	if one.GrantKeySet() != "https://i/jwks.json" || one.GrantAud() != "garm" {
		t.Fatalf("with one --jwks: grant key set %q, audience %q", one.GrantKeySet(), one.GrantAud())
	}
	one.GrantJWKS, one.GrantAudience = "https://approvals/jwks.json", "approvals"
	if one.GrantKeySet() != "https://approvals/jwks.json" || one.GrantAud() != "approvals" {
		t.Fatalf("given: grant key set %q, audience %q", one.GrantKeySet(), one.GrantAud())
	}

	negative := -time.Hour
	cases := map[string]func(*garmd.Config){
		"needs --grant-jwks: it defaults to --jwks only when exactly one is given, and 2 are": func(c *garmd.Config) {
			c.Issuers, c.JWKS = []string{"https://a", "https://b"}, []string{"https://a/j", "https://b/j"}
			c.GrantIssuer = "https://approvals"
		},
		"--grant-jwks is given without --grant-issuer":     func(c *garmd.Config) { c.GrantJWKS = "https://approvals/j" },
		"--grant-audience is given without --grant-issuer": func(c *garmd.Config) { c.GrantAudience = "approvals" },
		`--grant-jwks "http://approvals.example/j": key sets are fetched over https`: func(c *garmd.Config) {
			c.GrantIssuer, c.GrantJWKS = "https://approvals", "http://approvals.example/j"
		},
		"--audit-stream-retention -1h0m0s is negative": func(c *garmd.Config) { c.AuditStreamRetention = &negative },
	}
	for want, edit := range cases {
		cfg := garmd.DefaultConfig()
		cfg.Issuers, cfg.JWKS = []string{"https://i"}, []string{"https://i/jwks.json"}
		edit(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want a problem saying %q, got %v", want, err)
		}
	}
}

func TestTheMCPResourceIsAnHTTPSURLOrLoopbackAndNeedsMCP(t *testing.T) {
	t.Parallel()
	for resource, ok := range map[string]bool{
		"https://garm.example/mcp":   true,
		"http://127.0.0.1:7440/mcp":  true,
		"http://localhost/mcp":       true,
		"http://garm.example/mcp":    false,
		"https://garm.example/mcp?a": false,
		"https://garm.example/mcp#f": false,
		"garm.example/mcp":           false,
		"ftp://garm.example/mcp":     false,
	} {
		cfg := garmd.DefaultConfig()
		cfg.MCP, cfg.MCPResource = true, resource
		err := cfg.Validate()
		if got := err == nil || !strings.Contains(err.Error(), "--mcp-resource"); got != ok {
			t.Errorf("%s: accepted=%v, want %v (%v)", resource, got, ok, err)
		}
	}
	cfg := garmd.DefaultConfig()
	cfg.MCPResource = "https://garm.example/mcp"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "--mcp-resource is given without --mcp") {
		t.Fatalf("%v", err)
	}
}

// A limit's bound must be a bound: not negative, and shorter than a call.
func TestALimitBoundAsLongAsACallIsRefused(t *testing.T) {
	t.Parallel()
	c := garmd.DefaultConfig()
	c.LimitBound = c.ToolTimeout
	c.LimitReplicas = -1
	err := c.Validate()
	if err == nil || !strings.Contains(err.Error(), "--limit-bound") || !strings.Contains(err.Error(), "--limit-replicas -1") {
		t.Fatalf("validated: %v", err)
	}
}
