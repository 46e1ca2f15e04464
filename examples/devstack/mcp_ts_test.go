package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// tsClientsDir holds the TypeScript client tests, under the repository root.
const tsClientsDir = "tests/mcp-ts"

// TestTypeScriptMCPClients runs the official TypeScript MCP clients
// (tests/mcp-ts) against a stack started as main starts it. It fails, with
// the command that fixes it, when node or the folder's node_modules is
// missing: a third-party client's view is never skipped silently.
func TestTypeScriptMCPClients(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, tsClientsDir)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed: install Node.js 20 or later (apt-get install nodejs npm), then run: npm ci --prefix " + tsClientsDir)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "client")); err != nil {
		t.Fatal("the TypeScript clients are not installed: run: npm ci --prefix " + tsClientsDir)
	}

	s := startStack(t, testOptions(t))
	d := bankDemo()
	var customerRoute, paymentRoute string
	var materialFields []string
	for _, tool := range s.Catalogue().Artifact.Tools() {
		switch tool.FQN {
		case d.customerTool:
			customerRoute = tool.Method
		case d.paymentTool:
			paymentRoute = tool.Method
			materialFields = tool.Policy.GetApproval().GetMaterialFields()
		}
	}
	operator := connectAs(t, s, OperatorIdentity)
	approver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST", http.StatusMethodNotAllowed)
			return
		}
		grant, err := inboxGrant(operator, s, s.IdP().Personas().Users[d.treasurer].Subject, d.paymentTool)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte(grant))
	}))
	t.Cleanup(approver.Close)
	urls := s.URLs()
	fixture := map[string]any{
		"mcp": urls.MCP, "http": urls.Garmd, "idp": urls.IdP, "listRoute": listToolsRoute,
		"personas": map[string]any{
			d.support:            map[string]string{"user": d.support},
			d.analyst:            map[string]string{"user": d.analyst},
			d.outsider:           map[string]string{"user": d.outsider},
			d.treasurer:          map[string]string{"user": d.treasurer},
			d.agent + ">support": map[string]string{"user": d.support, "as": d.agent},
		},
		"seesCustomer":   []string{d.support, d.analyst, d.agent + ">support"},
		"outsider":       d.outsider,
		"treasurer":      d.treasurer,
		"customerTool":   d.customerTool,
		"customerRoute":  customerRoute,
		"customerArgs":   d.customerRequest,
		"paymentTool":    d.paymentTool,
		"paymentRoute":   paymentRoute,
		"paymentArgs":    d.paymentRequest,
		"materialFields": materialFields,
		// POST here approves the treasurer's open payment request in the inbox, as the
		// approver would, and answers its grant.
		"approve": approver.URL,
	}
	path := filepath.Join(t.TempDir(), "fixture.json")
	data, err := json.Marshal(fixture)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-concurrency=1", "clients.test.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GARM_MCP_FIXTURE="+path)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the TypeScript clients failed (%v):\n%s", err, out)
	}
	pass := regexp.MustCompile(`(?m)^# pass (\d+)$`).FindSubmatch(out)
	fail := regexp.MustCompile(`(?m)^# fail (\d+)$`).FindSubmatch(out)
	if pass == nil || fail == nil {
		t.Fatalf("the TypeScript clients' output has no summary:\n%s", out)
	}
	passed, _ := strconv.Atoi(string(pass[1]))
	if string(fail[1]) != "0" || passed < 12 {
		t.Fatalf("the TypeScript clients ran %s tests:\n%s", pass, out)
	}
	t.Logf("the TypeScript clients: %d passed", passed)
}
