package cli_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/catalogue-builder/cli"
	"github.com/garm-dev/garm/catalogue-builder/signature"
	"github.com/garm-dev/garm/devkit/s3test"
)

func TestPublishUploadsTheArtifactToARealS3CompatibleStore(t *testing.T) {
	store := s3test.Start(t)
	store.Env(t)
	store.CreateBucket(t, "catalogues")
	path := filepath.Join(t.TempDir(), "calc.binpb")
	if code, _, stderr := run(t, "build", "-f", calculatorManifest, "-o", path); code != cli.ExitOK {
		t.Fatalf("build: exit %d: %s", code, stderr)
	}
	built, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	code, stdout, stderr := run(t, "publish", path, "s3://catalogues/prod/calculator.binpb")
	if code != cli.ExitOK {
		t.Fatalf("publish: exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 3 || lines[0] != "published s3://catalogues/prod/calculator.binpb ("+strconv.Itoa(len(built))+" bytes)" ||
		lines[1] != artifact.Digest(built) || !strings.HasPrefix(lines[2], "etag ") {
		t.Fatalf("stdout:\n%s", stdout)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	obj, err := store.Client(t).GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("catalogues"), Key: aws.String("prod/calculator.binpb")})
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Body.Close()
	stored, err := io.ReadAll(obj.Body)
	if err != nil {
		t.Fatal(err)
	}
	if got := artifact.Digest(stored); got != lines[1] {
		t.Fatalf("the stored object's digest is %s, publish printed %s", got, lines[1])
	}
	if got := "etag " + strings.Trim(aws.ToString(obj.ETag), `"`); got != lines[2] {
		t.Errorf("the store's ETag is %q, publish printed %q", got, lines[2])
	}
}

func TestPublishRefusesAFileThatIsNotACatalogue(t *testing.T) {
	store := s3test.Start(t)
	store.Env(t)
	store.CreateBucket(t, "catalogues")
	path := filepath.Join(t.TempDir(), "garbage.binpb")
	if err := os.WriteFile(path, []byte("not a catalogue"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, "publish", path, "s3://catalogues/garbage.binpb")
	if code != cli.ExitRefused || !strings.Contains(stderr, "nothing uploaded") || stdout != "" {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	list, err := store.Client(t).ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("catalogues")})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Contents) != 0 {
		t.Fatalf("something was uploaded: %v", list.Contents)
	}
}

// getObject is one stored object's bytes, or nil when it does not exist.
func getObject(t *testing.T, store *s3test.Server, bucket, key string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	obj, err := store.Client(t).GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return nil
	}
	defer obj.Body.Close()
	data, err := io.ReadAll(obj.Body)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestPublishUploadsASignedArtifactAndThenItsSignaturesBesideIt(t *testing.T) {
	store := s3test.Start(t)
	store.Env(t)
	store.CreateBucket(t, "catalogues")
	dir := t.TempDir()
	alicePEM, alice := keygen(t, dir, "alice")
	setPath := filepath.Join(dir, "keys.json")
	mustRun(t, "keys", alice, "-o", setPath)
	path := filepath.Join(dir, "calc.binpb")
	mustRun(t, "build", "-f", calculatorManifest, "-o", path, "--sign-key", alicePEM, "--version", "1")

	stdout := mustRun(t, "publish", path, "s3://catalogues/prod/calculator.binpb")
	if !strings.Contains(stdout, "published s3://catalogues/prod/calculator.binpb.sig") {
		t.Fatalf("stdout:\n%s", stdout)
	}
	stored := getObject(t, store, "catalogues", "prod/calculator.binpb")
	envelope := getObject(t, store, "catalogues", signature.EnvelopeLocation("prod/calculator.binpb"))
	if stored == nil || envelope == nil {
		t.Fatalf("the artifact (%d bytes) or its envelope (%d bytes) is missing", len(stored), len(envelope))
	}
	keys, err := signature.ParseKeySet(mustReadFile(t, setPath))
	if err != nil {
		t.Fatal(err)
	}
	e, err := signature.Parse(envelope)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := signature.Verify(e, artifact.Digest(stored), keys); err != nil {
		t.Fatalf("the published pair does not verify: %v", err)
	}
}

func TestPublishRefusesAnEnvelopeOverAnotherArtifactAndUploadsNothing(t *testing.T) {
	store := s3test.Start(t)
	store.Env(t)
	store.CreateBucket(t, "catalogues")
	dir := t.TempDir()
	alicePEM, _ := keygen(t, dir, "alice")
	path := calculatorIn(t, dir)
	mustRun(t, "sign", path, "--key", alicePEM, "--version", "1", "--name", "calculator")
	mustRun(t, "build", "-f", calculatorManifest, "-o", path, "--stamp") // the artifact changes after signing
	code, _, stderr := run(t, "publish", path, "s3://catalogues/calculator.binpb")
	if code != cli.ExitRefused || !strings.Contains(stderr, "not this artifact") || !strings.Contains(stderr, "nothing uploaded") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if getObject(t, store, "catalogues", "calculator.binpb") != nil || getObject(t, store, "catalogues", "calculator.binpb.sig") != nil {
		t.Fatal("something was uploaded")
	}
}

func mustReadFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
