package garmd_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	garmd "github.com/garm-dev/garm/daemon"
)

// approvalProblems is every problem Validate reports about approvals in cfg.
func approvalProblems(t *testing.T, cfg garmd.Config) []string {
	t.Helper()
	var ce *garmd.ConfigError
	if err := cfg.Validate(); !errors.As(err, &ce) {
		return nil
	}
	var out []string
	for _, p := range ce.Problems {
		if strings.Contains(p, "approval") {
			out = append(out, p)
		}
	}
	return out
}

func TestApprovalsNeedGrantsAnInboxURLAndAStateKeyForMCP(t *testing.T) {
	t.Parallel()
	short := filepath.Join(t.TempDir(), "short.key")
	if err := os.WriteFile(short, []byte("sixteen bytes ok"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := garmd.DefaultConfig()
	cfg.Approvals, cfg.MCP = true, true
	got := approvalProblems(t, cfg)
	for _, want := range []string{"--approvals needs --grant-issuer", "--approvals needs --approvals-url", "needs --approval-state-key-file"} {
		if !strings.Contains(strings.Join(got, "\n"), want) {
			t.Errorf("the problems do not say %q:\n%s", want, strings.Join(got, "\n"))
		}
	}
	if len(got) != 3 {
		t.Errorf("%d approval problems, want 3: %q", len(got), got)
	}

	cfg.ApprovalsURL, cfg.ApprovalStateKeyFile = "ftp://inbox.example?x=1", short
	got = approvalProblems(t, cfg)
	for _, want := range []string{"--approvals-url", "holds 16 bytes of key"} {
		if !strings.Contains(strings.Join(got, "\n"), want) {
			t.Errorf("the problems do not say %q:\n%s", want, strings.Join(got, "\n"))
		}
	}

	off := garmd.DefaultConfig()
	off.ApprovalsURL, off.ApprovalStateKeyFile = "https://inbox.example", short
	if got := approvalProblems(t, off); len(got) != 2 || !strings.Contains(got[0], "without --approvals") {
		t.Errorf("approval flags without --approvals: %q", got)
	}
}
