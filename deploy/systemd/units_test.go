package systemd

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// units are the service units this folder ships, with the command each runs.
var units = map[string]string{
	"garmd.service":          "garmd",
	"garm-approvals.service": "garm-approvals",
}

// installSystemdAnalyze is how a Debian machine gets systemd-analyze.
const installSystemdAnalyze = "apt-get install -y systemd"

func TestSystemdAcceptsEveryUnitWithoutAWarning(t *testing.T) {
	t.Parallel()
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Fatalf("systemd-analyze is not installed; install it with: %s", installSystemdAnalyze)
	}
	// verify checks that ExecStart's command is executable: the units name
	// /usr/local/bin, so each is checked from a copy naming a stand-in.
	dir := t.TempDir()
	for name, command := range units {
		stand := filepath.Join(dir, command)
		if err := os.WriteFile(stand, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		unit, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		unit = bytes.ReplaceAll(unit, []byte("/usr/local/bin/"+command+" "), []byte(stand+" "))
		if err := os.WriteFile(filepath.Join(dir, name), unit, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name := range units {
		out, err := exec.Command(analyze, "verify", filepath.Join(dir, name)).CombinedOutput()
		if err != nil || len(bytes.TrimSpace(out)) > 0 {
			t.Errorf("systemd-analyze verify %s: %v\n%s", name, err, out)
		}
	}
}

// hardening is what every unit must say, in [Service]: a setting's one
// accepted value.
var hardening = map[string]string{
	"NoNewPrivileges":        "yes",
	"ProtectSystem":          "strict",
	"ProtectHome":            "yes",
	"PrivateTmp":             "yes",
	"PrivateDevices":         "yes",
	"DynamicUser":            "yes",
	"Restart":                "on-failure",
	"CapabilityBoundingSet":  "",
	"AmbientCapabilities":    "",
	"RestrictSUIDSGID":       "yes",
	"ProtectKernelTunables":  "yes",
	"ProtectKernelModules":   "yes",
	"ProtectControlGroups":   "yes",
	"MemoryDenyWriteExecute": "yes",
	"UMask":                  "0077",
}

func TestEveryUnitKeepsItsHardening(t *testing.T) {
	t.Parallel()
	for name, command := range units {
		service := section(t, name, "Service")
		for key, want := range hardening {
			got, ok := service[key]
			if !ok {
				t.Errorf("%s: [Service] has no %s (want %s=%s)", name, key, key, want)
				continue
			}
			if got[len(got)-1] != want {
				t.Errorf("%s: %s=%s, want %s", name, key, got[len(got)-1], want)
			}
		}
		if user, ok := service["User"]; ok && (user[0] == "root" || user[0] == "0") {
			t.Errorf("%s runs as root", name)
		}
		exec := service["ExecStart"]
		if len(exec) != 1 || !strings.HasPrefix(exec[0], "/usr/local/bin/"+command+" ") || !strings.Contains(exec[0], "--config /etc/garm/") {
			t.Errorf("%s: ExecStart=%q, want /usr/local/bin/%s reading its --config from /etc/garm", name, exec, command)
		}
		for _, env := range service["Environment"] {
			if !strings.Contains(env, "=%d/") {
				t.Errorf("%s: Environment=%s: the environment carries only secrets' paths in the credentials directory (%%d)", name, env)
			}
		}
		if install := section(t, name, "Install"); install["WantedBy"] == nil {
			t.Errorf("%s: [Install] has no WantedBy", name)
		}
	}
}

// section reads one section of a unit file: each key's values in order.
func section(t *testing.T, file, name string) map[string][]string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]string{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "["):
			in = line == "["+name+"]"
		case in:
			key, value, ok := strings.Cut(line, "=")
			if !ok {
				t.Fatalf("%s: %q is not key=value", file, line)
			}
			out[key] = append(out[key], value)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
