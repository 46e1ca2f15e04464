package garmd_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/catalogue-builder/builder"
	garmd "github.com/garm-dev/garm/daemon"
	"github.com/garm-dev/garm/devkit/s3test"
	cataloguev1 "github.com/garm-dev/garm/gen/garm/catalogue/v1"
	"github.com/garm-dev/garm/runtime/toolbind"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

const (
	catalogueBucket = "catalogues"
	catalogueKey    = "garmd/catalogue.binpb"
	catalogueURL    = "s3://" + catalogueBucket + "/" + catalogueKey
	greetPath       = "/more.v1.Greeter/Greet"
	// shortPoll is how often the reload tests' garmd polls the store.
	shortPoll = 200 * time.Millisecond
)

// grownCatalogue is the fixture catalogue with one more tool,
// more.v1.Greeter/Greet, once per test binary.
var grownCatalogue = sync.OnceValues(func() ([]byte, error) {
	c, err := builder.FromRoots(context.Background(), "testdata/records/proto", "../examples/calculator/proto", "testdata/reload/proto")
	if err != nil {
		return nil, err
	}
	return c.Bytes, nil
})

// catalogueStore is a real S3-compatible store (versitygw) holding the
// catalogue garmd serves, with the AWS default chain pointed at it the way
// an operator would: garmd finds it through the environment alone.
type catalogueStore struct {
	t      testing.TB
	srv    *s3test.Server
	client *s3.Client
}

func startCatalogueStore(t testing.TB) *catalogueStore {
	t.Helper()
	srv := s3test.Start(t)
	srv.Env(t)
	srv.CreateBucket(t, catalogueBucket)
	return &catalogueStore{t: t, srv: srv, client: srv.Client(t)}
}

// countPolls puts a loopback proxy between garmd and the store, as the
// endpoint the AWS default chain names, and returns the number of HEAD
// requests — polls — it has passed on. The store's own client (publish)
// still talks to the store directly.
func (c *catalogueStore) countPolls(t testing.TB) *atomic.Int64 {
	t.Helper()
	target, err := url.Parse(c.srv.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	heads := new(atomic.Int64)
	// The request keeps the Host it was signed for, so the store checks
	// the signature garmd made.
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			heads.Add(1)
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Setenv("AWS_ENDPOINT_URL", srv.URL)
	return heads
}

// publish puts data at the catalogue's key and returns its digest.
func (c *catalogueStore) publish(data []byte) string {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if _, err := c.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(catalogueBucket), Key: aws.String(catalogueKey), Body: bytes.NewReader(data),
	}); err != nil {
		c.t.Fatal(err)
	}
	return artifact.Digest(data)
}

// withS3Catalogue publishes data to the store and serves it from there,
// polled every poll.
func withS3Catalogue(store *catalogueStore, data func() ([]byte, error), poll time.Duration) stackOption {
	return func(c *garmd.Config) {
		store.publish(must(store.t, data))
		c.Catalogue = catalogueURL
		c.CataloguePoll = poll
	}
}

func must(t testing.TB, data func() ([]byte, error)) []byte {
	t.Helper()
	b, err := data()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// variant is data with another producer: the same tools, other bytes, so
// another generation.
func variant(t testing.TB, data []byte, producer string) []byte {
	t.Helper()
	c := &cataloguev1.Catalogue{}
	if err := proto.Unmarshal(data, c); err != nil {
		t.Fatal(err)
	}
	c.Provenance.Producer = producer
	out, err := artifact.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// startGreeter serves more.v1.Greeter, the tool the grown catalogue adds.
func startGreeter(t testing.TB, url string) {
	t.Helper()
	_ = serveServiceOf(t, grownCatalogue, url, "greeter", "more.v1.Greeter", "more.v1",
		func(_ string, out protoreflect.MessageDescriptor) toolbind.Handler {
			return func(_ context.Context, req proto.Message) (proto.Message, error) {
				res := dynamicpb.NewMessage(out)
				set(res, "greeting", "hello, "+str(req.ProtoReflect(), "name"))
				return res, nil
			}
		})
}

// logLines counts garmd's log lines containing text.
func (s *stack) logLines(text string) int { return strings.Count(s.logs.String(), text) }
