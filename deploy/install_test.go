package deploy

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMakeInstallStampsEveryCommandsVersion runs `make install` as a user
// would, into a temporary BINDIR with a VERSION given (as git describe would
// give it), and asks each installed command for its version.
func TestMakeInstallStampsEveryCommandsVersion(t *testing.T) {
	t.Parallel()
	const version = "v0.0.0-test-stamp"
	bin := t.TempDir()
	cmd := exec.Command("make", "-s", "install", "BINDIR="+bin, "VERSION="+version)
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	for _, c := range []struct {
		command string
		args    []string
		want    string
	}{
		{"garmd", []string{"version"}, "garmd " + version},
		{"garm-catalogue", []string{"version"}, "garm-catalogue/" + version},
		{"garm", []string{"catalogue", "version"}, "garm-catalogue/" + version},
		{"garm-approvals", []string{"version"}, "garm-approvals " + version},
		{"garm-sealer", []string{"version"}, "garm-sealer " + version},
	} {
		out, err := exec.Command(filepath.Join(bin, c.command), c.args...).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != c.want {
			t.Errorf("%s %s: %v %q, want %q", c.command, strings.Join(c.args, " "), err, out, c.want)
		}
	}
}
