package artifact

import (
	"errors"
	"strings"
	"unicode/utf8"
)

// The refusals of ParseS3URL and CheckS3Location. They never echo the URL:
// a URL with user information may carry a secret.
var (
	errNotS3URL   = errors.New("s3 URL: want s3://bucket/key")
	errScheme     = errors.New("s3 URL: the scheme must be s3: want s3://bucket/key")
	errUserinfo   = errors.New("s3 URL: user information (user@ or user:password@) is not allowed; credentials come from the AWS default chain")
	errPort       = errors.New("s3 URL: a port is not allowed; set AWS_ENDPOINT_URL to use another store")
	errQuery      = errors.New("s3 URL: a query (?...) is not allowed")
	errFragment   = errors.New("s3 URL: a fragment (#...) is not allowed")
	errNoBucket   = errors.New("s3 URL: the bucket is missing")
	errBucketName = errors.New("s3 URL: the bucket is not a valid S3 bucket name " +
		"(3 to 63 lowercase letters, digits, dots and hyphens, starting and ending with a letter or digit)")
	errNoKey      = errors.New("s3 URL: the key is missing")
	errKeyIsDir   = errors.New("s3 URL: the key ends in /, which names a folder, not an object")
	errKeyInvalid = errors.New("s3 URL: the key must be valid UTF-8 of at most 1024 bytes")
)

// maxKeyBytes is S3's limit on an object key, in UTF-8 bytes.
const maxKeyBytes = 1024

// ParseS3URL reads "s3://bucket/key", where a catalogue artifact is
// published (garm-catalogue publish) and read from (garmd --catalogue). The
// key is everything after the bucket's slash, taken literally (no
// percent-decoding), and must name an object. One parser serves both, so
// what the builder publishes to, garmd can read from.
func ParseS3URL(raw string) (bucket, key string, err error) {
	scheme, rest, ok := strings.Cut(raw, "://")
	switch {
	case !ok:
		return "", "", errNotS3URL
	case scheme != "s3":
		return "", "", errScheme
	case strings.Contains(rest, "?"):
		return "", "", errQuery
	case strings.Contains(rest, "#"):
		return "", "", errFragment
	}
	authority, key, hasSlash := strings.Cut(rest, "/")
	switch {
	case strings.Contains(authority, "@"):
		return "", "", errUserinfo
	case strings.Contains(authority, ":"):
		return "", "", errPort
	case !hasSlash && authority != "":
		return "", "", errNoKey
	}
	if err := CheckS3Location(authority, key); err != nil {
		return "", "", err
	}
	return authority, key, nil
}

// CheckS3Location applies the rules a bucket and key must meet to hold a
// catalogue: a valid general-purpose bucket name and a key naming an
// object.
func CheckS3Location(bucket, key string) error {
	switch {
	case bucket == "":
		return errNoBucket
	case !validBucketName(bucket):
		return errBucketName
	case key == "":
		return errNoKey
	case strings.HasSuffix(key, "/"):
		return errKeyIsDir
	case len(key) > maxKeyBytes || !utf8.ValidString(key):
		return errKeyInvalid
	}
	return nil
}

// validBucketName applies S3's general-purpose bucket naming rules that a
// URL can get wrong: 3–63 characters of lowercase letters, digits, dots and
// hyphens, starting and ending with a letter or digit.
func validBucketName(name string) bool {
	if len(name) < 3 || len(name) > 63 {
		return false
	}
	alnum := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }
	for i := 0; i < len(name); i++ {
		if c := name[i]; !alnum(c) && c != '.' && c != '-' {
			return false
		}
	}
	return alnum(name[0]) && alnum(name[len(name)-1])
}
