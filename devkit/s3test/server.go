package s3test

import (
	"bytes"
	"context"
	"crypto/rand"
	"debug/buildinfo"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// VersitygwVersion is the versitygw release the tests run against; the Makefile's
// VERSITYGW_VERSION installs the same one (a test keeps the two equal).
const VersitygwVersion = "v1.8.0"

// versitygwModule is the module versitygw is built from, as its build info records it.
const versitygwModule = "github.com/versity/versitygw"

// installHint is how a developer gets the pinned binary; every "cannot run" failure ends with it.
const installHint = "install it with `make tools` (go install " + versitygwModule + "/cmd/versitygw@" +
	VersitygwVersion + " into .tmp/bin)"

// Region is the region the server is started with and the one [Server.Env] and [Server.Client]
// sign for.
const Region = "us-east-1"

const (
	// ReadyTimeout bounds how long [Start] waits for the server to answer a signed request.
	ReadyTimeout = 20 * time.Second
	// StopTimeout bounds how long [Server.Stop] waits after SIGTERM before it kills the process.
	StopTimeout = 10 * time.Second
	// startAttempts is how many random ports Start tries: the port is chosen by closing a
	// listener the OS opened, so another process may take it before versitygw binds.
	startAttempts = 3
	pollInterval  = 50 * time.Millisecond
)

// Server is a running versitygw. Its fields describe how to reach it; they are read-only.
type Server struct {
	// Endpoint is the base URL, http://127.0.0.1:PORT.
	Endpoint string
	// AccessKey and SecretKey are the root credentials, random for each server.
	AccessKey, SecretKey string
	// Region is the region the server expects in signatures.
	Region string
	// Dir is the posix directory the server stores buckets in (one sub-directory per bucket).
	Dir string

	cmd      *exec.Cmd
	output   *lockedBuffer
	exited   chan struct{} // closed once the process has been waited for
	stopOnce sync.Once
	stopped  chan struct{} // closed when Stop begins, so an exit after it is expected
}

// Start runs versitygw for the test and returns once it answers a signed request. The server is
// stopped when the test and its subtests finish. A missing binary, a server that does not start
// and a server that does not become ready within [ReadyTimeout] fail the test with its output.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := versitygwBinary(t)
	dir := t.TempDir()
	var lastOutput string
	for range startAttempts {
		s, err := start(t, bin, dir)
		if err == nil {
			t.Cleanup(func() { s.cleanup(t) })
			return s
		}
		lastOutput = s.Output()
		if !strings.Contains(lastOutput, "address already in use") {
			t.Fatalf("s3test: versitygw did not start: %v\nversitygw output:\n%s", err, lastOutput)
		}
	}
	t.Fatalf("s3test: versitygw could not bind a free loopback port in %d attempts\nversitygw output:\n%s",
		startAttempts, lastOutput)
	return nil
}

func start(t testing.TB, bin, dir string) (*Server, error) {
	t.Helper()
	addr, err := freeLoopbackAddr()
	if err != nil {
		return &Server{output: &lockedBuffer{}}, err
	}
	s := &Server{
		Endpoint:  "http://" + addr,
		AccessKey: rand.Text()[:20],
		SecretKey: rand.Text() + rand.Text(),
		Region:    Region,
		Dir:       dir,
		output:    &lockedBuffer{},
		exited:    make(chan struct{}),
		stopped:   make(chan struct{}),
	}
	s.cmd = exec.Command(bin,
		"--port", addr,
		"--access", s.AccessKey,
		"--secret", s.SecretKey,
		"--region", s.Region,
		"--quiet",
		"posix", dir,
	)
	s.cmd.Env = versitygwEnv()
	s.cmd.Stdout = s.output
	s.cmd.Stderr = s.output
	if err := s.cmd.Start(); err != nil {
		return s, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() {
		_ = s.cmd.Wait()
		close(s.exited)
	}()
	if err := s.waitReady(); err != nil {
		s.Stop()
		return s, err
	}
	return s, nil
}

// waitReady polls with ListBuckets, which only succeeds once the server is listening and accepts
// these credentials.
func (s *Server) waitReady() error {
	client := s.newClient(func(o *s3.Options) { o.RetryMaxAttempts = 1 })
	deadline := time.Now().Add(ReadyTimeout)
	var lastErr error
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			return fmt.Errorf("versitygw exited before it was ready (%s)", s.cmd.ProcessState)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, lastErr = client.ListBuckets(ctx, &s3.ListBucketsInput{})
		cancel()
		if lastErr == nil {
			return nil
		}
		time.Sleep(pollInterval)
	}
	return fmt.Errorf("versitygw was not ready after %s: last attempt: %v", ReadyTimeout, lastErr)
}

// Stop stops the server now: SIGTERM to the process Start began, then SIGKILL if it has not
// exited within [StopTimeout]. It returns once the process has exited, so the endpoint refuses
// connections. Calling it again, or after the test, does nothing.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		close(s.stopped)
		select {
		case <-s.exited:
			return
		default:
		}
		if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			_ = s.cmd.Process.Kill()
		}
		select {
		case <-s.exited:
		case <-time.After(StopTimeout):
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
	})
}

// cleanup stops the server and reports a server that died during the test on its own, which
// would otherwise surface only as confusing connection errors.
func (s *Server) cleanup(t testing.TB) {
	select {
	case <-s.exited:
		select {
		case <-s.stopped:
		default:
			t.Errorf("s3test: versitygw exited during the test (%s)\nversitygw output:\n%s",
				s.cmd.ProcessState, s.Output())
		}
	default:
	}
	s.Stop()
}

// Output is what versitygw has printed so far, for failure messages.
func (s *Server) Output() string { return s.output.String() }

// clearedEnv are the variables of the SDK's default chain that could point it somewhere other
// than this server: a profile, a session token that would pair with the wrong key, an S3-only
// endpoint that overrides AWS_ENDPOINT_URL, web identity.
var clearedEnv = []string{
	"AWS_PROFILE",
	"AWS_DEFAULT_PROFILE",
	"AWS_SESSION_TOKEN",
	"AWS_SECURITY_TOKEN",
	"AWS_DEFAULT_REGION",
	"AWS_ENDPOINT_URL_S3",
	"AWS_IGNORE_CONFIGURED_ENDPOINT_URLS",
	"AWS_ROLE_ARN",
	"AWS_ROLE_SESSION_NAME",
	"AWS_WEB_IDENTITY_TOKEN_FILE",
	"AWS_CONTAINER_CREDENTIALS_FULL_URI",
	"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
}

// Env points the AWS SDK's default configuration chain at this server for the rest of the test,
// the way an operator would: AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
// AWS_REGION are set, the variables that could redirect the chain are unset, the shared config
// and credentials files are paths that do not exist, and instance metadata is disabled, so a
// developer's own AWS setup never leaks in. Like t.Setenv, it cannot be used in parallel tests.
func (s *Server) Env(t testing.TB) {
	t.Helper()
	missing := t.TempDir()
	t.Setenv("AWS_ENDPOINT_URL", s.Endpoint)
	t.Setenv("AWS_ACCESS_KEY_ID", s.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s.SecretKey)
	t.Setenv("AWS_REGION", s.Region)
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(missing, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(missing, "credentials"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	for _, name := range clearedEnv {
		t.Setenv(name, "") // restores the old value after the test
		if err := os.Unsetenv(name); err != nil {
			t.Fatalf("s3test: unset %s: %v", name, err)
		}
	}
}

// Client is a path-style client signed with the server's credentials, for setting up and
// checking what the code under test did. It does not depend on the environment.
func (s *Server) Client(t testing.TB) *s3.Client {
	t.Helper()
	return s.newClient()
}

func (s *Server) newClient(optFns ...func(*s3.Options)) *s3.Client {
	return s3.New(s3.Options{
		Region:       s.Region,
		BaseEndpoint: aws.String(s.Endpoint),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(s.AccessKey, s.SecretKey, ""),
	}, optFns...)
}

// CreateBucket creates a bucket, failing the test if the server refuses.
func (s *Server) CreateBucket(t testing.TB, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := s.newClient().CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatalf("s3test: create bucket %q: %v\nversitygw output:\n%s", name, err, s.Output())
	}
}

// versitygwBinary finds the pinned binary: the repository's .tmp/bin first (where `make tools`
// puts it), then PATH. Anything else fails the test with the install command.
func versitygwBinary(t testing.TB) string {
	t.Helper()
	var candidates []string
	if _, file, _, ok := runtime.Caller(0); ok {
		if root, ok := moduleRoot(filepath.Dir(file)); ok {
			candidates = append(candidates, filepath.Join(root, ".tmp", "bin", "versitygw"))
		}
	}
	if wd, err := os.Getwd(); err == nil { // the package directory under `go test`, even with -trimpath
		if root, ok := moduleRoot(wd); ok {
			candidates = append(candidates, filepath.Join(root, ".tmp", "bin", "versitygw"))
		}
	}
	if path, err := exec.LookPath("versitygw"); err == nil {
		candidates = append(candidates, path)
	}
	for _, path := range candidates {
		if info, err := os.Stat(path); err != nil || info.IsDir() {
			continue
		}
		if err := checkVersion(path); err != nil {
			t.Fatalf("s3test: %v: %s", err, installHint)
		}
		return path
	}
	t.Fatalf("versitygw not found: %s", installHint)
	return ""
}

// moduleRoot walks up from dir to the directory holding go.mod.
func moduleRoot(dir string) (string, bool) {
	if !filepath.IsAbs(dir) {
		return "", false
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// checkVersion reads the module version Go recorded in the binary; `versitygw --version` prints
// none when built with go install.
func checkVersion(path string) error {
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%s is not a Go binary with build info (%v)", path, err)
	}
	if info.Main.Path != versitygwModule || info.Main.Version != VersitygwVersion {
		return fmt.Errorf("%s is %s %s, want %s %s", path, info.Main.Path, info.Main.Version,
			versitygwModule, VersitygwVersion)
	}
	return nil
}

// versitygwEnv is this process's environment without the variables versitygw would read as
// configuration (VGW_*, ROOT_*, its log destinations) or that describe a developer's AWS setup:
// the server is configured by its flags alone.
func versitygwEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "VGW_"), strings.HasPrefix(name, "ROOT_"),
			strings.HasPrefix(name, "AWS_"), name == "LOGFILE", name == "WEBHOOK":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// freeLoopbackAddr asks the OS for a free 127.0.0.1 port.
func freeLoopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free loopback port: %w", err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		return "", errors.Join(errors.New("find a free loopback port"), err)
	}
	return addr, nil
}

// lockedBuffer collects the server's output; the process writes while a test may read.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
