package publish_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/garm-dev/garm/catalogue-builder/internal/publish"
	"github.com/garm-dev/garm/devkit/s3test"
)

const bucket = "catalogues"

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// storeWithBucket starts a store holding one bucket and points the default chain at it.
func storeWithBucket(t *testing.T) *s3test.Server {
	t.Helper()
	srv := s3test.Start(t)
	srv.CreateBucket(t, bucket)
	srv.Env(t)
	return srv
}

func sha256Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func TestAPublishedArtifactIsTheObjectTheStoreHolds(t *testing.T) {
	ctx := testContext(t)
	srv := storeWithBucket(t)
	artifact := []byte("\x0a\x03garm catalogue artifact bytes\x00\xff")
	target := publish.Target{Bucket: bucket, Key: "prod/eu/catalogue.binpb"}

	res, err := publish.Publish(ctx, artifact, target)
	if err != nil {
		t.Fatalf("Publish: %v\nversitygw output:\n%s", err, srv.Output())
	}
	if res.Bucket != bucket || res.Key != target.Key || res.Size != int64(len(artifact)) {
		t.Errorf("Result = %+v, want bucket %q, key %q, size %d", res, bucket, target.Key, len(artifact))
	}
	if want := sha256Digest(artifact); res.Digest != want {
		t.Errorf("Result.Digest = %q, want %q", res.Digest, want)
	}
	if res.ETag == "" || strings.Contains(res.ETag, `"`) {
		t.Errorf("Result.ETag = %q, want the store's ETag without quotes", res.ETag)
	}

	client := srv.Client(t)
	got, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(target.Key)})
	if err != nil {
		t.Fatalf("GetObject: %v", err)
	}
	defer got.Body.Close()
	body, err := io.ReadAll(got.Body)
	if err != nil {
		t.Fatalf("read the object: %v", err)
	}
	if d := sha256Digest(body); d != res.Digest {
		t.Errorf("the stored object's digest is %s, Publish reported %s", d, res.Digest)
	}

	head, err := client.HeadObject(ctx, &s3.HeadObjectInput{
		Bucket:       aws.String(bucket),
		Key:          aws.String(target.Key),
		ChecksumMode: types.ChecksumModeEnabled,
	})
	if err != nil {
		t.Fatalf("HeadObject: %v", err)
	}
	if etag := strings.Trim(aws.ToString(head.ETag), `"`); etag != res.ETag {
		t.Errorf("HeadObject ETag %q, Publish reported %q", etag, res.ETag)
	}
	if ct := aws.ToString(head.ContentType); ct != publish.ContentType {
		t.Errorf("content type %q, want %q", ct, publish.ContentType)
	}
	if md := head.Metadata[publish.DigestMetadataKey]; md != res.Digest {
		t.Errorf("metadata %s = %q, want %q (all metadata: %v)", publish.DigestMetadataKey, md, res.Digest, head.Metadata)
	}
	sum := sha256.Sum256(artifact)
	if cs, want := aws.ToString(head.ChecksumSHA256), base64.StdEncoding.EncodeToString(sum[:]); cs != want {
		t.Errorf("stored SHA-256 checksum %q, want %q: the checksum was not sent or not kept", cs, want)
	}
}

func TestRepublishingChangesTheETagGarmdPolls(t *testing.T) {
	ctx := testContext(t)
	srv := storeWithBucket(t)
	target := publish.Target{Bucket: bucket, Key: "catalogue.binpb"}

	first, err := publish.Publish(ctx, []byte("first catalogue"), target)
	if err != nil {
		t.Fatalf("first Publish: %v\n%s", err, srv.Output())
	}
	second, err := publish.Publish(ctx, []byte("second catalogue"), target)
	if err != nil {
		t.Fatalf("second Publish: %v\n%s", err, srv.Output())
	}
	if first.ETag == second.ETag || first.Digest == second.Digest {
		t.Fatalf("two different artifacts gave ETags %q, %q and digests %q, %q; want both to differ",
			first.ETag, second.ETag, first.Digest, second.Digest)
	}
}

func TestPublishingToAMissingBucketSaysSo(t *testing.T) {
	ctx := testContext(t)
	storeWithBucket(t)
	_, err := publish.Publish(ctx, []byte("artifact"), publish.Target{Bucket: "no-such-bucket", Key: "c.binpb"})
	if err == nil {
		t.Fatal("Publish to a missing bucket succeeded")
	}
	for _, want := range []string{"publish s3://no-such-bucket/c.binpb:", "the bucket does not exist"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
}

func TestPublishingWithCredentialsTheStoreDoesNotKnowIsRefused(t *testing.T) {
	for _, tc := range []struct{ name, envVar, value string }{
		{"a wrong secret", "AWS_SECRET_ACCESS_KEY", "not-the-secret"},
		{"an unknown access key", "AWS_ACCESS_KEY_ID", "AKIAUNKNOWNKEY000000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			storeWithBucket(t)
			t.Setenv(tc.envVar, tc.value)
			_, err := publish.Publish(ctx, []byte("artifact"), publish.Target{Bucket: bucket, Key: "c.binpb"})
			if err == nil {
				t.Fatal("Publish with bad credentials succeeded")
			}
			if !strings.Contains(err.Error(), "publish s3://catalogues/c.binpb: ") {
				t.Errorf("error %q does not name the target", err)
			}
			t.Logf("the refusal reads: %v", err)
		})
	}
}

func TestWithoutARegionPublishSignsForTheDefaultRegion(t *testing.T) {
	ctx := testContext(t)
	srv := storeWithBucket(t)
	if srv.Region != publish.DefaultRegion {
		t.Fatalf("the test store expects region %q, this test needs %q", srv.Region, publish.DefaultRegion)
	}
	t.Setenv("AWS_REGION", "")
	os.Unsetenv("AWS_REGION")
	if _, err := publish.Publish(ctx, []byte("artifact"), publish.Target{Bucket: bucket, Key: "c.binpb"}); err != nil {
		t.Fatalf("Publish with no region configured: %v\n%s", err, srv.Output())
	}
}

func TestAnS3OnlyEndpointAlsoMeansPathStyle(t *testing.T) {
	ctx := testContext(t)
	srv := storeWithBucket(t)
	t.Setenv("AWS_ENDPOINT_URL", "")
	os.Unsetenv("AWS_ENDPOINT_URL")
	t.Setenv("AWS_ENDPOINT_URL_S3", srv.Endpoint)
	if _, err := publish.Publish(ctx, []byte("artifact"), publish.Target{Bucket: bucket, Key: "c.binpb"}); err != nil {
		t.Fatalf("Publish through AWS_ENDPOINT_URL_S3: %v\n%s", err, srv.Output())
	}
}

func TestPublishingToAStoreThatWentAwayFails(t *testing.T) {
	ctx := testContext(t)
	srv := storeWithBucket(t)
	srv.Stop()
	_, err := publish.Publish(ctx, []byte("artifact"), publish.Target{Bucket: bucket, Key: "c.binpb"})
	if err == nil || !strings.Contains(err.Error(), "publish s3://catalogues/c.binpb: ") {
		t.Fatalf("Publish to a stopped store: err = %v, want a failure naming the target", err)
	}
}

func TestPublishRefusesWhatCannotBeACatalogueObject(t *testing.T) {
	ctx := testContext(t)
	for _, tc := range []struct {
		name     string
		artifact []byte
		target   publish.Target
		want     string
	}{
		{"an empty artifact", nil, publish.Target{Bucket: bucket, Key: "k"}, "the artifact is empty"},
		{"no bucket", []byte("a"), publish.Target{Key: "k"}, "the bucket is missing"},
		{"an invalid bucket", []byte("a"), publish.Target{Bucket: "Bad_Bucket", Key: "k"}, "not a valid S3 bucket name"},
		{"no key", []byte("a"), publish.Target{Bucket: bucket}, "the key is missing"},
		{"a folder key", []byte("a"), publish.Target{Bucket: bucket, Key: "dir/"}, "ends in /"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := publish.Publish(ctx, tc.artifact, tc.target)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Publish(%q, %+v) = %v, want an error containing %q", tc.artifact, tc.target, err, tc.want)
			}
		})
	}
}

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want publish.Target
	}{
		{"s3://catalogues/catalogue.binpb", publish.Target{Bucket: "catalogues", Key: "catalogue.binpb"}},
		{"s3://my.bucket-01/key/with/slashes.binpb", publish.Target{Bucket: "my.bucket-01", Key: "key/with/slashes.binpb"}},
		{"s3://abc/a b%20c+d=e", publish.Target{Bucket: "abc", Key: "a b%20c+d=e"}},
		{"s3://abc/ünïcode", publish.Target{Bucket: "abc", Key: "ünïcode"}},
		{"s3://" + strings.Repeat("a", 63) + "/k", publish.Target{Bucket: strings.Repeat("a", 63), Key: "k"}},
		{"s3://abc/" + strings.Repeat("k", 1024), publish.Target{Bucket: "abc", Key: strings.Repeat("k", 1024)}},
	} {
		got, err := publish.ParseURL(tc.raw)
		if err != nil || got != tc.want {
			t.Errorf("ParseURL(%q) = %+v, %v; want %+v", tc.raw, got, err, tc.want)
		}
		if err == nil && got.String() != tc.raw {
			t.Errorf("ParseURL(%q).String() = %q, want the URL back", tc.raw, got.String())
		}
	}
}

func TestParseURLRefusals(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		{"", "want s3://bucket/key"},
		{"catalogues/key", "want s3://bucket/key"},
		{"https://catalogues/key", "the scheme must be s3"},
		{"S3://catalogues/key", "the scheme must be s3"},
		{"gs://catalogues/key", "the scheme must be s3"},
		{"s3:///key", "the bucket is missing"},
		{"s3://", "the bucket is missing"},
		{"s3://catalogues", "the key is missing"},
		{"s3://catalogues/", "the key is missing"},
		{"s3://catalogues/dir/", "ends in /"},
		{"s3://catalogues/key?versionId=1", "a query"},
		{"s3://catalogues/key#frag", "a fragment"},
		{"s3://user@catalogues/key", "user information"},
		{"s3://user:hunter2@catalogues/key", "user information"},
		{"s3://catalogues:9000/key", "a port is not allowed"},
		{"s3://ab/key", "not a valid S3 bucket name"},
		{"s3://" + strings.Repeat("a", 64) + "/key", "not a valid S3 bucket name"},
		{"s3://Catalogues/key", "not a valid S3 bucket name"},
		{"s3://cata_logues/key", "not a valid S3 bucket name"},
		{"s3://-catalogues/key", "not a valid S3 bucket name"},
		{"s3://catalogues-/key", "not a valid S3 bucket name"},
		{"s3://.catalogues/key", "not a valid S3 bucket name"},
		{"s3://catalogues./key", "not a valid S3 bucket name"},
		{"s3://abc/" + strings.Repeat("k", 1025), "at most 1024 bytes"},
		{"s3://abc/\xff", "valid UTF-8"},
	} {
		got, err := publish.ParseURL(tc.raw)
		if err == nil {
			t.Errorf("ParseURL(%q) = %+v, want an error containing %q", tc.raw, got, tc.want)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseURL(%q) error %q, want it to contain %q", tc.raw, err, tc.want)
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("ParseURL(%q) error %q repeats the password", tc.raw, err)
		}
	}
}
