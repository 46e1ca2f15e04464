package main

import (
	"os"
	"strings"
	"testing"
)

// TestTheSystemdUnitNamesOnlyVariablesAndFlagsGarmdReads holds
// deploy/systemd/garmd.service to this command: each Environment= is one
// of the secret-path variables garmd reads, and ExecStart's arguments parse.
func TestTheSystemdUnitNamesOnlyVariablesAndFlagsGarmdReads(t *testing.T) {
	data, err := os.ReadFile("../../../deploy/systemd/garmd.service")
	if err != nil {
		t.Fatal(err)
	}
	var execArgs []string
	for _, line := range strings.Split(string(data), "\n") {
		key, value, _ := strings.Cut(strings.TrimSpace(line), "=")
		switch key {
		case "Environment":
			name, _, _ := strings.Cut(value, "=")
			if _, ok := secretPathEnv[name]; !ok {
				t.Errorf("the unit sets %s, which garmd does not read", name)
			}
		case "ExecStart":
			execArgs = strings.Fields(value)[1:]
		}
	}
	if len(execArgs) == 0 || execArgs[0] != "serve" {
		t.Fatalf("ExecStart runs %q, want garmd serve", execArgs)
	}
	_, _, problems, err := loadConfig("garmd serve", execArgs[1:], new(strings.Builder))
	if err != nil {
		t.Fatalf("ExecStart's arguments do not parse: %v", err)
	}
	for _, p := range problems {
		if !strings.Contains(p, "/etc/garm/garmd.yaml") { // absent here, present on the host
			t.Errorf("ExecStart's arguments: %s", p)
		}
	}
}
