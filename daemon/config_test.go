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
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the problems do not mention %q:\n%v", want, err)
		}
	}
	if len(ce.Problems) != 9 {
		t.Errorf("%d problems, want 9:\n%v", len(ce.Problems), err)
	}
}

func TestTheDefaultsAreTheSpecs(t *testing.T) {
	cfg := garmd.DefaultConfig()
	if cfg.NATS != "nats://127.0.0.1:4222" || cfg.Listen != "127.0.0.1:7440" || cfg.AdminListen != "127.0.0.1:7441" ||
		cfg.Audience != "garm" || cfg.ToolTimeout != 30*time.Second || cfg.MaxTools != 0 || cfg.LedgerStream {
		t.Fatalf("%+v", cfg)
	}
}

func TestJWKSOverPlainHTTPIsAcceptedOnlyFromLoopback(t *testing.T) {
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
