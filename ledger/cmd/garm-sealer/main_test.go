package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/garm-dev/garm/ledger/head"
	"github.com/garm-dev/garm/ledger/sealer"
	"github.com/nats-io/nats-server/v2/server"
)

func TestGarmSealerReportsEveryMissingFlagAtOnce(t *testing.T) {
	t.Parallel()
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"--every-rows", "0"}, &stderr)
	if code != 2 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"--nats is required", "--key is required", "--every-rows and --every must be positive"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr.String())
		}
	}
}

// TestGarmSealerJoinsTheBusWithGarmdsConnectionFlags runs the sealer's
// command line against a NATS server that admits only a user with a
// password: with --nats-user-file it connects and reaches JetStream (where
// it stops, naming the head stream this bus lacks); without it, or with a
// wrong password, the server refuses it.
func TestGarmSealerJoinsTheBusWithGarmdsConnectionFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: filepath.Join(dir, "js"), NoSigs: true,
		Users: []*server.User{{Username: "sealer", Password: "pw-sealer"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	t.Cleanup(srv.Shutdown)
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server did not start")
	}
	keyFile := filepath.Join(dir, "sealer.pem")
	if _, err := head.GenerateKeyFile(keyFile); err != nil {
		t.Fatal(err)
	}
	user := func(password string) string {
		f := filepath.Join(dir, password+".user")
		if err := os.WriteFile(f, []byte("sealer\n"+password+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	seal := func(extra ...string) (int, string) {
		var stderr bytes.Buffer
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		code := run(ctx, append([]string{"--nats", srv.ClientURL(), "--key", keyFile}, extra...), &stderr)
		return code, stderr.String()
	}
	if code, out := seal("--nats-user-file", user("pw-sealer")); code != 1 || !strings.Contains(out, sealer.HeadStream) {
		t.Errorf("with its user file: exit %d, want 1 naming the missing %s after connecting:\n%s", code, sealer.HeadStream, out)
	}
	for name, extra := range map[string][]string{"no credentials": nil, "a wrong password": {"--nats-user-file", user("not-its-password")}} {
		if code, out := seal(extra...); code != 1 || !strings.Contains(strings.ToLower(out), "authorization") {
			t.Errorf("with %s: exit %d, want 1 and the server's refusal:\n%s", name, code, out)
		}
	}
}

// TestGarmSealerVersionPrintsTheStampedVersion: make install and make image
// stamp sealer.version as they stamp garmd's; unstamped, a test binary is
// dev.
func TestGarmSealerVersionPrintsTheStampedVersion(t *testing.T) {
	var out, stderr bytes.Buffer
	stdout = &out
	t.Cleanup(func() { stdout = os.Stdout })
	if code := run(t.Context(), []string{"version"}, &stderr); code != 0 || out.String() != "garm-sealer dev\n" {
		t.Errorf("version: exit %d, %q %q", code, out.String(), stderr.String())
	}
}
