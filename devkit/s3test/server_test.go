package s3test_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/garm-dev/garm/devkit/s3test"
)

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestAStartedServerStoresAndReturnsAnObject(t *testing.T) {
	ctx := testContext(t)
	srv := s3test.Start(t)
	srv.CreateBucket(t, "artifacts")
	client := srv.Client(t)

	body := []byte("hello from garm")
	if _, err := client.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String("artifacts"),
		Key:    aws.String("nested/path/hello.txt"),
		Body:   bytes.NewReader(body),
	}); err != nil {
		t.Fatalf("PutObject: %v\n%s", err, srv.Output())
	}
	out, err := client.GetObject(ctx, &s3.GetObjectInput{
		Bucket: aws.String("artifacts"),
		Key:    aws.String("nested/path/hello.txt"),
	})
	if err != nil {
		t.Fatalf("GetObject: %v\n%s", err, srv.Output())
	}
	defer out.Body.Close()
	got, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	if !bytes.Equal(got, body) {
		t.Fatalf("GetObject returned %q, want %q", got, body)
	}
	onDisk, err := os.ReadFile(filepath.Join(srv.Dir, "artifacts", "nested", "path", "hello.txt"))
	if err != nil || !bytes.Equal(onDisk, body) {
		t.Fatalf("the posix backend holds %q (%v), want %q", onDisk, err, body)
	}
}

func TestTheServerListensOnLoopbackOnly(t *testing.T) {
	srv := s3test.Start(t)
	u, err := url.Parse(srv.Endpoint)
	if err != nil {
		t.Fatalf("parse endpoint %q: %v", srv.Endpoint, err)
	}
	if u.Scheme != "http" || u.Hostname() != "127.0.0.1" || u.Port() == "" {
		t.Fatalf("endpoint %q, want http://127.0.0.1:PORT", srv.Endpoint)
	}
}

func TestTheServerRefusesASignatureMadeWithTheWrongSecret(t *testing.T) {
	ctx := testContext(t)
	srv := s3test.Start(t)
	wrong := s3.New(s3.Options{
		Region:       srv.Region,
		BaseEndpoint: aws.String(srv.Endpoint),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(srv.AccessKey, srv.SecretKey+"x", ""),
	})
	if _, err := wrong.ListBuckets(ctx, &s3.ListBucketsInput{}); err == nil {
		t.Fatal("ListBuckets signed with the wrong secret succeeded; the server is not checking signatures")
	}
}

func TestTheServerRefusesBytesThatDoNotMatchTheirSHA256Checksum(t *testing.T) {
	ctx := testContext(t)
	srv := s3test.Start(t)
	srv.CreateBucket(t, "checked")
	sum := sha256.Sum256([]byte("the bytes that were meant"))
	_, err := srv.Client(t).PutObject(ctx, &s3.PutObjectInput{
		Bucket:            aws.String("checked"),
		Key:               aws.String("k"),
		Body:              strings.NewReader("the bytes that arrived"),
		ChecksumAlgorithm: types.ChecksumAlgorithmSha256,
		ChecksumSHA256:    aws.String(base64.StdEncoding.EncodeToString(sum[:])),
	})
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "BadDigest" {
		t.Fatalf("PutObject with a mismatched SHA-256 checksum: err = %v, want the store's BadDigest", err)
	}
}

func TestEachServerHasItsOwnCredentials(t *testing.T) {
	a, b := s3test.Start(t), s3test.Start(t)
	if a.AccessKey == b.AccessKey || a.SecretKey == b.SecretKey || a.Endpoint == b.Endpoint {
		t.Fatalf("two servers share credentials or an endpoint: %+v and %+v", a, b)
	}
}

func TestAStoppedServerRefusesConnections(t *testing.T) {
	srv := s3test.Start(t)
	addr := strings.TrimPrefix(srv.Endpoint, "http://")

	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		t.Fatalf("dial the running server: %v", err)
	}
	conn.Close()

	start := time.Now()
	srv.Stop()
	t.Logf("Stop took %s", time.Since(start))
	srv.Stop() // idempotent

	if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		conn.Close()
		t.Fatalf("dial %s after Stop succeeded, want connection refused", addr)
	}
}

func TestEnvPointsTheDefaultChainAtTheServerAndNothingElse(t *testing.T) {
	ctx := testContext(t)
	srv := s3test.Start(t)
	srv.CreateBucket(t, "from-env")

	// A developer's profile and S3-only endpoint must not survive Env.
	t.Setenv("AWS_PROFILE", "a-profile-that-does-not-exist")
	t.Setenv("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:1")
	t.Setenv("AWS_SESSION_TOKEN", "stale")
	srv.Env(t)

	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		t.Fatalf("LoadDefaultConfig: %v", err)
	}
	if cfg.Region != srv.Region {
		t.Errorf("region %q, want %q", cfg.Region, srv.Region)
	}
	if cfg.BaseEndpoint == nil || *cfg.BaseEndpoint != srv.Endpoint {
		t.Errorf("base endpoint %v, want %q", cfg.BaseEndpoint, srv.Endpoint)
	}
	creds, err := cfg.Credentials.Retrieve(ctx)
	if err != nil {
		t.Fatalf("retrieve credentials: %v", err)
	}
	if creds.AccessKeyID != srv.AccessKey || creds.SecretAccessKey != srv.SecretKey || creds.SessionToken != "" {
		t.Errorf("credentials %q/%q/%q, want the server's and no session token",
			creds.AccessKeyID, creds.SecretAccessKey, creds.SessionToken)
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
	list, err := client.ListBuckets(ctx, &s3.ListBucketsInput{})
	if err != nil {
		t.Fatalf("ListBuckets through the default chain: %v\n%s", err, srv.Output())
	}
	if len(list.Buckets) != 1 || aws.ToString(list.Buckets[0].Name) != "from-env" {
		t.Fatalf("ListBuckets = %+v, want the one bucket this test created", list.Buckets)
	}
}

func TestTheMakefileInstallsTheVersionTheTestsExpect(t *testing.T) {
	makefile := filepath.Join("..", "..", "Makefile") // go test runs in the package directory
	data, err := os.ReadFile(makefile)
	if err != nil {
		t.Fatalf("read the Makefile: %v", err)
	}
	want := "VERSITYGW_VERSION := " + s3test.VersitygwVersion
	for line := range strings.Lines(string(data)) {
		if strings.TrimSpace(line) == want {
			return
		}
	}
	t.Fatalf("%s has no line %q: pin the same versitygw in both places", makefile, want)
}
