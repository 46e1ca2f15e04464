package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	conformancev1 "github.com/garm-dev/garm/conformance/gen/garm/conformance/v1"
	"github.com/garm-dev/garm/conformance/reference"
	"github.com/garm-dev/garm/runtime/garmtool"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/nats-io/nats.go"
)

// serveReference serves the Go reference on url until the test ends.
func serveReference(t *testing.T, url string) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	svc := garmtool.New("conformance-reference", "1.0.0")
	if err := conformancev1.ServeConformance(svc, reference.Handler{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx, nc) }()
	t.Cleanup(func() { cancel(); <-done; nc.Close() })
	select {
	case <-svc.Ready():
	case err := <-done:
		t.Fatal(err)
	}
}

func TestConformanceToolserviceAgainstARunningServicePassesAndSkipsOnlyLifecycle(t *testing.T) {
	srv := garmtooltest.StartServer(t)
	serveReference(t, srv.URL())
	junit := filepath.Join(t.TempDir(), "junit.xml")
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	code := run(ctx, []string{"conformance", "toolservice", "--nats", srv.URL(), "--junit", junit}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	last := regexp.MustCompile(`(?m)^(\d+) passed, 0 failed, 4 skipped\n\z`)
	if !last.MatchString(stdout.String()) {
		t.Fatalf("the closing line is not N passed, 0 failed, 4 skipped:\n%s", stdout.String())
	}
	xml, err := os.ReadFile(junit)
	if err != nil || !strings.Contains(string(xml), `failures="0"`) || !strings.Contains(string(xml), `skipped="4"`) {
		t.Fatalf("junit: %v\n%s", err, xml)
	}
}

func TestConformanceToolserviceExitsNonZeroWhenACaseFails(t *testing.T) {
	srv := garmtooltest.StartServer(t)
	serveReference(t, srv.URL())
	dir := t.TempDir()
	suite := `{"version": 1, "cases": [
	  {"name": "echo.wrong", "promise": "a case the service cannot pass", "send": {"tool": "Echo", "body": {"text": "a"}}, "expect": {"response": {"text": "b"}}}
	]}`
	if err := os.WriteFile(filepath.Join(dir, "wrong.json"), []byte(suite), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	code := run(ctx, []string{"conformance", "toolservice", "--nats", srv.URL(), "--cases", dir}, &stdout, &stderr)
	if code == exitOK || !strings.HasSuffix(stdout.String(), "\n0 passed, 1 failed, 0 skipped\n") {
		t.Fatalf("exit %d, want non-zero with one failure:\n%s%s", code, stdout.String(), stderr.String())
	}
}

func TestConformanceToolserviceWithExecRunsTheLifecycleCasesToo(t *testing.T) {
	t.Setenv(serveReferenceEnv, "1")
	srv := garmtooltest.StartServer(t)
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	code := run(ctx, []string{"conformance", "toolservice", "--nats", srv.URL(), "--exec", os.Args[0] + " -test.run=^$"}, &stdout, &stderr)
	last := regexp.MustCompile(`(?m)^(\d+) passed, 0 failed, 0 skipped\n\z`)
	if code != exitOK || !last.MatchString(stdout.String()) {
		t.Fatalf("exit %d, want every case passed and none skipped:\n%s%s", code, stdout.String(), stderr.String())
	}
}
