package source_test

import (
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/catalogue/source"
)

func TestParseS3URL(t *testing.T) {
	for _, tc := range []struct {
		raw, bucket, key, refusal string
	}{
		{raw: "s3://garm-catalogues/prod/catalogue.binpb", bucket: "garm-catalogues", key: "prod/catalogue.binpb"},
		{raw: "s3://b.example/k", bucket: "b.example", key: "k"},
		{raw: "s3://bucket/a%20b", bucket: "bucket", key: "a%20b"},
		{raw: "s3://bucket", refusal: "the key is missing"},
		{raw: "s3://bucket/", refusal: "the key is missing"},
		{raw: "s3:///key", refusal: "the bucket is missing"},
		{raw: "s3://bucket:9000/key", refusal: "a port is not allowed"},
		{raw: "s3://bucket/key?versionId=1", refusal: "a query"},
		{raw: "s3://bucket/key#frag", refusal: "a fragment"},
		{raw: "s3://user:secret@bucket/key", refusal: "user information"},
		{raw: "s3://Bucket/key", refusal: "not a valid S3 bucket name"},
		{raw: "s3://bucket/dir/", refusal: "names a folder"},
		{raw: "s3://bucket/" + strings.Repeat("k", 1025), refusal: "at most 1024 bytes"},
		{raw: "https://bucket/key", refusal: "want s3://bucket/key"},
	} {
		bucket, key, err := source.ParseS3URL(tc.raw)
		switch {
		case tc.refusal == "" && err != nil:
			t.Errorf("%s: %v", tc.raw, err)
		case tc.refusal == "" && (bucket != tc.bucket || key != tc.key):
			t.Errorf("%s: bucket %q key %q", tc.raw, bucket, key)
		case tc.refusal != "" && (err == nil || !strings.Contains(err.Error(), tc.refusal)):
			t.Errorf("%s: got %v, want a refusal saying %q", tc.raw, err, tc.refusal)
		case err != nil && strings.Contains(err.Error(), "secret"):
			t.Errorf("%s: the refusal echoes the URL: %v", tc.raw, err)
		}
	}
}
