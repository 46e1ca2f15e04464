package publish_test

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/garm-dev/garm/catalogue-builder/internal/publish"
)

// recordingProxy stands between publish and a real store, recording the
// key of every PUT in order and refusing those refuse says to.
type recordingProxy struct {
	mu     sync.Mutex
	puts   []string
	refuse func(path string) bool
}

// start points the default chain at a proxy in front of srv's store.
func (p *recordingProxy) start(t *testing.T, endpoint string) {
	t.Helper()
	target, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Host = r.In.Host // the request was signed for the proxy's host
	}}
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			p.mu.Lock()
			p.puts = append(p.puts, r.URL.Path)
			refused := p.refuse != nil && p.refuse(r.URL.Path)
			p.mu.Unlock()
			if refused {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	t.Setenv("AWS_ENDPOINT_URL", front.URL)
	t.Setenv("AWS_MAX_ATTEMPTS", "1")
}

func TestASignedArtifactIsUploadedBeforeItsEnvelope(t *testing.T) {
	srv := storeWithBucket(t)
	p := &recordingProxy{}
	p.start(t, srv.Endpoint)
	target := publish.Target{Bucket: bucket, Key: "prod/calc.binpb"}
	art, env, err := publish.PublishSigned(testContext(t), []byte("artifact"), []byte(`{"envelope":1}`), target)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"/catalogues/prod/calc.binpb", "/catalogues/prod/calc.binpb.sig"}; strings.Join(p.puts, " ") != strings.Join(want, " ") {
		t.Fatalf("PUTs %v, want %v", p.puts, want)
	}
	if art.Key != "prod/calc.binpb" || env.Key != "prod/calc.binpb.sig" || env.Digest != sha256Digest([]byte(`{"envelope":1}`)) {
		t.Fatalf("results %+v %+v", art, env)
	}
	head, err := srv.Client(t).HeadObject(testContext(t), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(env.Key)})
	if err != nil {
		t.Fatal(err)
	}
	if got := aws.ToString(head.ContentType); got != publish.EnvelopeContentType {
		t.Errorf("the envelope's content type is %q", got)
	}
}

func TestAFailedArtifactUploadUploadsNoEnvelopeAndAFailedEnvelopeUploadSaysRunAgain(t *testing.T) {
	srv := storeWithBucket(t)
	p := &recordingProxy{refuse: func(path string) bool { return !strings.HasSuffix(path, ".sig") }}
	p.start(t, srv.Endpoint)
	target := publish.Target{Bucket: bucket, Key: "calc.binpb"}
	if _, _, err := publish.PublishSigned(testContext(t), []byte("artifact"), []byte("envelope"), target); err == nil || !strings.Contains(err.Error(), "the envelope was not uploaded") {
		t.Fatalf("a refused artifact upload: %v", err)
	}
	for _, put := range p.puts {
		if strings.HasSuffix(put, ".sig") {
			t.Fatalf("the envelope was uploaded after its artifact's upload failed: %v", p.puts)
		}
	}
	p.mu.Lock()
	p.refuse = func(path string) bool { return strings.HasSuffix(path, ".sig") }
	p.mu.Unlock()
	if _, _, err := publish.PublishSigned(testContext(t), []byte("artifact"), []byte("envelope"), target); err == nil || !strings.Contains(err.Error(), "run publish again") {
		t.Fatalf("a refused envelope upload: %v", err)
	}
}
