package main

import (
	"os"
	"strings"
	"testing"
)

// TestTheSystemdUnitNamesOnlyVariablesGarmApprovalsReads holds
// deploy/systemd/garm-approvals.service to this command's secret-path
// variables.
func TestTheSystemdUnitNamesOnlyVariablesGarmApprovalsReads(t *testing.T) {
	data, err := os.ReadFile("../../../deploy/systemd/garm-approvals.service")
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, line := range strings.Split(string(data), "\n") {
		if value, ok := strings.CutPrefix(strings.TrimSpace(line), "Environment="); ok {
			seen++
			name, _, _ := strings.Cut(value, "=")
			if _, ok := secretPathEnv[name]; !ok {
				t.Errorf("the unit sets %s, which garm-approvals does not read", name)
			}
		}
	}
	if seen == 0 {
		t.Fatal("the unit names no secret's path")
	}
}
