package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeFile writes content to name in a new temporary folder.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// lines are the effective configuration's lines, by key.
func lines(out string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(l, ": "); ok {
			m[k] = v
		}
	}
	return m
}

func TestFlagsOverrideTheConfigFileAndTheFileOverridesTheDefaults(t *testing.T) {
	file := writeFile(t, "garmd.yaml", `
listen: 127.0.0.1:9000
tool-timeout: 5s
issuer: [https://from-the-file, https://also-from-the-file]
jwks:
  - https://file/jwks1
  - https://file/jwks2
mcp: true
max-in-flight: 7
`)
	code, out, errOut := runGarmd("config", "--config", file, "--listen", "127.0.0.1:9100", "--issuer", "https://from-a-flag", "--jwks", "https://flag/jwks")
	if code != exitFailed { // no catalogue, no hash key: printed, then refused
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	got := lines(out)
	for key, want := range map[string]string{
		"listen":        "127.0.0.1:9100",          // the flag, over the file
		"tool-timeout":  "5s",                      // the file, over the default
		"issuer":        "['https://from-a-flag']", // a flag's list replaces the file's
		"jwks":          "['https://flag/jwks']",
		"mcp":           "true",
		"max-in-flight": "7",
		"admin-listen":  "127.0.0.1:7441", // the default
	} {
		if got[key] != want {
			t.Errorf("%s: %q, want %q\n%s", key, got[key], want, out)
		}
	}
}

func TestAnEnvironmentVariableNamesASecretsPathBetweenTheFileAndTheFlags(t *testing.T) {
	file := writeFile(t, "garmd.yaml", "hash-key-file: /from/the/file\nnats-creds: /file/nats.creds\n")
	t.Setenv("GARMD_HASH_KEY_FILE", "/from/the/environment")
	t.Setenv("GARMD_NATS_CREDS", "/env/nats.creds")
	_, out, _ := runGarmd("config", "--config", file, "--nats-creds", "/flag/nats.creds")
	got := lines(out)
	if got["hash-key-file"] != "/from/the/environment" || got["nats-creds"] != "/flag/nats.creds" {
		t.Fatalf("hash-key-file %q (want the environment's), nats-creds %q (want the flag's)\n%s", got["hash-key-file"], got["nats-creds"], out)
	}
}

func TestUnknownKeysAreRefusedEachByName(t *testing.T) {
	file := writeFile(t, "garmd.yaml", "listen: 127.0.0.1:9000\nlisten-adress: 127.0.0.1:1\nhash_key_file: /k\nconfig: other.yaml\n")
	code, _, errOut := runGarmd("serve", "--config", file)
	if code != exitFailed {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{`:2: unknown key "listen-adress"`, `:3: unknown key "hash_key_file"`, `:4: unknown key "config"`} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}

func TestServeReportsTheFilesProblemsAndTheConfigurationsAtOnce(t *testing.T) {
	file := writeFile(t, "garmd.yaml", `
no-such-key: 1
tool-timeout: soon
max-tools: many
issuer: {a: b}
listen: [127.0.0.1:1]
listen: 127.0.0.1:2
`)
	code, _, errOut := runGarmd("serve", "--config", file, "--header-timeout", "0s")
	if code != exitFailed {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{
		`unknown key "no-such-key"`,
		"tool-timeout: parse error",
		"max-tools: parse error",
		"issuer is a list or a plain value",
		"listen is a plain value",
		`"listen" is given twice`,
		"--catalogue is required", // Validate's, in the same report
		"--hash-key-file is required",
		"--header-timeout 0s is not positive",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}

func TestConfigElidesSecrets(t *testing.T) {
	const key = "this-is-the-hash-key-0123456789"
	keyFile := writeFile(t, "hash.key", key)
	file := writeFile(t, "garmd.yaml", "nats: nats://garmd:hunter2@bus-1:4222,nats://s3cr3t-token@bus-2:4222\nhash-key-file: "+keyFile+"\n")
	_, out, errOut := runGarmd("config", "--config", file)
	for _, secret := range []string{"hunter2", "s3cr3t-token", key} {
		if strings.Contains(out, secret) || strings.Contains(errOut, secret) {
			t.Errorf("garmd config printed %q:\n%s\n%s", secret, out, errOut)
		}
	}
	if got := lines(out)["nats"]; got != "nats://REDACTED@bus-1:4222,nats://REDACTED@bus-2:4222" {
		t.Errorf("nats: %q", got)
	}
	if got := lines(out)["hash-key-file"]; got != keyFile {
		t.Errorf("hash-key-file: %q, want the path %q", got, keyFile)
	}
}

func TestTheEffectiveConfigurationReadsBackAsTheSameConfiguration(t *testing.T) {
	file := writeFile(t, "garmd.yaml", "audit-stream-retention: 72h\nissuer: [a, b]\njwks: [https://a/j, https://b/j]\ngogc: \"150\"\nnotify: true\n")
	_, first, _ := runGarmd("config", "--config", file, "--max-tools", "9")
	again := writeFile(t, "again.yaml", first)
	code, second, errOut := runGarmd("config", "--config", again)
	if first != second {
		t.Fatalf("the printed configuration read back differs:\n%s\n---\n%s", first, second)
	}
	if strings.Contains(errOut, "unknown key") || code == exitUsage {
		t.Fatalf("a printed configuration is refused as a file: %d\n%s", code, errOut)
	}
}

func TestTheSigningKeysAreConfigFileKeysAsTheTokenKeySetsAre(t *testing.T) {
	file := writeFile(t, "garmd.yaml", `
catalogue-keys: https://keys.example/catalogue-jwks.json
catalogue-min-signers: 2
catalogue-min-signers-group: owners=1,security=1
catalogue-allow-rollback-to: 41
`)
	_, out, errOut := runGarmd("config", "--config", file)
	got := lines(out)
	for key, want := range map[string]string{
		"catalogue-keys":              "https://keys.example/catalogue-jwks.json",
		"catalogue-min-signers":       "2",
		"catalogue-min-signers-group": "owners=1,security=1",
		"catalogue-allow-rollback-to": "41",
	} {
		if strings.Trim(got[key], `'"`) != want {
			t.Errorf("%s: %q, want %q\n%s\n%s", key, got[key], want, out, errOut)
		}
	}
	if strings.Contains(errOut, "catalogue-") {
		t.Errorf("the signing keys were refused:\n%s", errOut)
	}
}
