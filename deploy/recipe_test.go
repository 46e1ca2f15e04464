package deploy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// recipeTimeout bounds the whole recipe, its builds included: on a cold
// two-core machine the builds take most of it.
const recipeTimeout = 4 * time.Minute

// recipeSteps are the steps docs/operators.md's recipe has, in order: a
// step dropped from the document, or its marker, fails the test rather than
// leaving a command unrun.
var recipeSteps = []string{"build", "permissions", "certificates", "users", "server", "bus-init",
	"identity-provider", "tool-service", "approvals", "garmd", "call", "stop"}

// recipeBlock is a command block of the recipe, marked
// <!-- doc-test: recipe STEP --> on the line before it.
var recipeBlock = regexp.MustCompile("(?ms)^<!-- doc-test: recipe ([a-z-]+) -->\n```sh\n(.*?)^```\n")

// TestTheOperatorsRecipeRunsAsWritten runs docs/operators.md's TLS recipe as
// an operator would: every block marked `doc-test: recipe`, extracted from
// the document, in order, in one bash, from the repository root. It builds
// the commands (nats-server from go.mod's module), makes a CA, a server
// certificate and every secret with openssl into a fresh directory, and
// starts nats-server (TLS, the derived permissions), garm idp, calcd,
// garm-approvals and garmd as separate processes on free loopback ports;
// its call through garmd must answer the sum. Every process is stopped by
// the PID the recipe recorded, and the shell's process group is killed if
// the recipe fails or outlives its bound.
func TestTheOperatorsRecipeRunsAsWritten(t *testing.T) {
	// Not parallel: its make install builds first, and the install test
	// and the image test, which run in parallel after it, find the
	// packages compiled.
	for _, tool := range []string{"bash", "make", "openssl", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the recipe needs %s: apt-get install %s", tool, tool)
		}
	}
	doc, err := os.ReadFile("../docs/operators.md")
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	script := "set -euo pipefail\n"
	for _, m := range recipeBlock.FindAllStringSubmatch(string(doc), -1) {
		steps = append(steps, m[1])
		script += fmt.Sprintf("echo '### recipe step %s' >&2\n%s", m[1], m[2])
	}
	if !slices.Equal(steps, recipeSteps) {
		t.Fatalf("the recipe's marked steps are %q, want %q", steps, recipeSteps)
	}

	bus := t.TempDir()
	env := append(os.Environ(), "GARM_BUS="+bus)
	for _, name := range []string{"NATS_PORT", "NATS_MONITOR_PORT", "IDP_PORT", "APPROVALS_PORT", "GARMD_PORT", "GARMD_ADMIN_PORT"} {
		env = append(env, name+"="+strconv.Itoa(freePort(t)))
	}
	ctx, cancel := context.WithTimeout(t.Context(), recipeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = ".."
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	start := time.Now()
	err = cmd.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopRecorded(t, bus, cmd.Process.Pid) })
	err = cmd.Wait()
	t.Logf("the recipe ran in %s", time.Since(start).Round(time.Second))
	if err != nil {
		t.Fatalf("the recipe failed (%v):\n%s\n%s%s", err, stdout.String(), stderr.String(), logs(bus))
	}
	if running := stillRunning(bus, 15*time.Second); len(running) > 0 {
		t.Errorf("the recipe's last step left %q running", running)
	}
	for _, want := range []string{"200", `"sum": 5`} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("the call's output lacks %q:\n%s\n%s%s", want, stdout.String(), stderr.String(), logs(bus))
		}
	}
}

// recorded are the PIDs the recipe wrote to its .pid files, by file name.
func recorded(bus string) map[string]int {
	pids := map[string]int{}
	files, _ := filepath.Glob(filepath.Join(bus, "*.pid"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && pid > 1 {
			pids[filepath.Base(f)] = pid
		}
	}
	return pids
}

// alive reports whether pid is a process that has not exited (a zombie
// waiting for its reaper has).
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(rest, "Z") && !strings.HasPrefix(rest, "X")
}

// stillRunning waits, bounded, for every recorded process to exit and
// names those that did not.
func stillRunning(bus string, bound time.Duration) []string {
	deadline := time.Now().Add(bound)
	for {
		var running []string
		for name, pid := range recorded(bus) {
			if alive(pid) {
				running = append(running, name)
			}
		}
		if len(running) == 0 || time.Now().After(deadline) {
			slices.Sort(running)
			return running
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stopRecorded kills what the recipe started and did not stop: each PID it
// recorded in a .pid file, then its shell's process group.
func stopRecorded(t *testing.T, bus string, shell int) {
	for name, pid := range recorded(bus) {
		if alive(pid) && syscall.Kill(pid, syscall.SIGKILL) == nil {
			t.Logf("killed %s's process %d, which the recipe left running", name, pid)
		}
	}
	if err := syscall.Kill(-shell, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		t.Logf("killing the recipe's process group: %v", err)
	}
}

// logs are the recipe's processes' log files, for a failure's report.
func logs(bus string) string {
	files, _ := filepath.Glob(filepath.Join(bus, "*.log"))
	var b strings.Builder
	for _, f := range files {
		data, _ := os.ReadFile(f)
		if len(data) > 4000 {
			data = data[len(data)-4000:]
		}
		fmt.Fprintf(&b, "\n--- %s\n%s", filepath.Base(f), data)
	}
	return b.String()
}

// freePort is a loopback port free when asked.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
