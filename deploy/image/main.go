package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// commands are the images this tool builds: each one's package and what
// its entrypoint is given by default.
var commands = []command{
	{Name: "garmd", Package: "./daemon/cmd/garmd", Cmd: []string{"serve", "--config", "/etc/garm/garmd.yaml"}},
	{Name: "garm-approvals", Package: "./approvals/cmd/garm-approvals", Cmd: []string{"--config", "/etc/garm/garm-approvals.yaml"}},
}

type command struct {
	Name    string
	Package string
	Cmd     []string
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", ".tmp/image", "the `folder` the image tarballs are written to")
	version := fs.String("version", "", "the version stamped into the binaries (default: git describe --tags --always --dirty)")
	unix := fs.Int64("time", -1, "every time in the image, in Unix `seconds` (default: the commit's time)")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		return 2
	}
	if *version == "" {
		v, err := git(ctx, "describe", "--tags", "--always", "--dirty")
		if err != nil {
			fmt.Fprintln(stderr, "image:", err)
			return 1
		}
		*version = v
	}
	if *unix < 0 {
		v, err := git(ctx, "log", "-1", "--format=%ct")
		if err == nil {
			*unix, err = strconv.ParseInt(v, 10, 64)
		}
		if err != nil {
			fmt.Fprintln(stderr, "image: the commit's time:", err)
			return 1
		}
	}
	at := time.Unix(*unix, 0).UTC()
	tmp, err := os.MkdirTemp("", "garm-image-")
	if err != nil {
		fmt.Fprintln(stderr, "image:", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintln(stderr, "image:", err)
		return 1
	}
	for _, c := range commands {
		bin := filepath.Join(tmp, c.Name)
		if err := buildBinary(ctx, c.Package, bin, *version); err != nil {
			fmt.Fprintln(stderr, "image:", err)
			return 1
		}
		path := filepath.Join(*out, c.Name+".oci.tar")
		digest, err := writeImage(path, c, bin, *version, at)
		if err != nil {
			fmt.Fprintln(stderr, "image:", err)
			return 1
		}
		fmt.Fprintf(stdout, "%s %s %s\n", path, c.Name+":"+*version, digest)
	}
	return 0
}

// ldflags stamps version into the variables each command prints for
// `version`, as the Makefile's LDFLAGS does for `make install`.
func ldflags(version string) string {
	return "-X github.com/garm-dev/garm/daemon.version=" + version +
		" -X github.com/garm-dev/garm/catalogue-builder/cli.version=" + version +
		" -X github.com/garm-dev/garm/approvals.version=" + version +
		" -X github.com/garm-dev/garm/ledger/sealer.version=" + version
}

// buildBinary builds pkg, static and without the build machine's paths,
// into out.
func buildBinary(ctx context.Context, pkg, out, version string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", ldflags(version), "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
	}
	return nil
}

func git(ctx context.Context, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, "git", args...).Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}
