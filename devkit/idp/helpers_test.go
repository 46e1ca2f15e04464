package idp_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jwt"

	"github.com/garm-dev/garm/devkit/idp"
)

const testPersonas = "testdata/personas.yaml"

// testContext bounds everything a test does over the network.
func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func loadPersonas(t *testing.T) *idp.Personas {
	t.Helper()
	p, err := idp.LoadPersonas(testPersonas)
	if err != nil {
		t.Fatalf("LoadPersonas: %v", err)
	}
	return p
}

func newIdP(t *testing.T, o idp.Options) *idp.IdP {
	t.Helper()
	i, err := idp.New(loadPersonas(t), o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return i
}

// start serves i on a loopback port for the rest of the test.
func start(t *testing.T, i *idp.IdP) *idp.Server {
	t.Helper()
	srv, err := i.Start("127.0.0.1:0")
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return srv
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends one request and reads at most 1 MiB of the answer.
func do(t *testing.T, ctx context.Context, method, url string) response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		t.Fatalf("read %s %s: %v", method, url, err)
	}
	return response{status: res.StatusCode, header: res.Header, body: body}
}

// fetchToken GETs a token over HTTP and fails the test unless it is answered 200.
func fetchToken(t *testing.T, ctx context.Context, srv *idp.Server, query string) string {
	t.Helper()
	res := do(t, ctx, http.MethodGet, srv.URL()+idp.TokenPath+"?"+query)
	if res.status != http.StatusOK {
		t.Fatalf("GET /token?%s: %d %s", query, res.status, res.body)
	}
	return string(res.body)
}

// verify checks a token's signature against the key set served over HTTP, and its iss and aud.
func verify(t *testing.T, ctx context.Context, srv *idp.Server, i *idp.IdP, token string, opts ...jwt.ParseOption) (jwt.Token, error) {
	t.Helper()
	set, err := jwk.Fetch(ctx, srv.JWKSURL())
	if err != nil {
		t.Fatalf("fetch JWKS: %v", err)
	}
	opts = append([]jwt.ParseOption{
		jwt.WithKeySet(set), jwt.WithIssuer(i.Issuer()), jwt.WithAudience(i.Audience()),
	}, opts...)
	return jwt.ParseString(token, opts...)
}

// segment decodes one part of a compact JWS (0 header, 1 payload) as JSON, numbers kept exact.
func segment(t *testing.T, token string, n int) map[string]any {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("token has %d parts, want 3: %q", len(parts), token)
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[n])
	if err != nil {
		t.Fatalf("decode segment %d: %v", n, err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out map[string]any
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("segment %d is not a JSON object: %v\n%s", n, err, raw)
	}
	return out
}

// asJSON re-encodes a value so expectations written as Go literals compare with decoded JSON.
func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return string(b)
}

// fixedTime is a whole second, and fixedClock a clock stopped at it.
var fixedTime = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

func fixedClock() time.Time { return fixedTime }
