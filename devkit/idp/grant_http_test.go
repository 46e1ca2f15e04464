package idp_test

import (
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"
	"testing"

	"github.com/lestrrat-go/jwx/v3/jwt"

	"github.com/garm-dev/garm/devkit/idp"
)

// postGrant POSTs body to /grant with the given Content-Type (none when empty).
func postGrant(t *testing.T, ctx context.Context, srv *idp.Server, contentType, body string) response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL()+idp.GrantPath, strings.NewReader(body))
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST /grant: %v", err)
	}
	defer res.Body.Close()
	got, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		t.Fatalf("read POST /grant: %v", err)
	}
	return response{status: res.StatusCode, header: res.Header, body: got}
}

const paymentBody = `{"approver": "analyst", "tool": "payments.v1.initiate_payment", "subject": "user:sam@acme.example",
 "material": {"amount_minor_units": "125000", "beneficiary_iban": "GB29NWBK60161331926819", "currency_code": "GBP"},
 "task": "TASK-42"}`

func TestGrantRequestsAreAnsweredWithTheRightStatus(t *testing.T) {
	ctx := testContext(t)
	srv := start(t, newIdP(t, idp.Options{}))
	const jsonType = "application/json"
	cases := []struct {
		name        string
		contentType string
		body        string
		status      int
	}{
		{"a payment approved by a user", jsonType, paymentBody, http.StatusOK},
		{"no Content-Type", "", paymentBody, http.StatusOK},
		{"JSON with a charset", "application/json; charset=utf-8", paymentBody, http.StatusOK},
		{"no task and no material", jsonType, `{"approver": "support", "tool": "t.v1.x", "subject": "s"}`, http.StatusOK},
		{"null task and material", jsonType, `{"approver": "support", "tool": "t.v1.x", "subject": "s", "task": null, "material": null}`, http.StatusOK},
		{"material approving an absence", jsonType, `{"approver": "support", "tool": "t.v1.x", "subject": "s", "material": {"memo": "<unset>"}}`, http.StatusOK},
		{"an unknown approver", jsonType, `{"approver": "mallory", "tool": "t.v1.x", "subject": "s"}`, http.StatusNotFound},
		{"an agent approving", jsonType, `{"approver": "assistant", "tool": "t.v1.x", "subject": "s"}`, http.StatusBadRequest},
		{"no approver", jsonType, `{"tool": "t.v1.x", "subject": "s"}`, http.StatusBadRequest},
		{"no tool", jsonType, `{"approver": "support", "subject": "s"}`, http.StatusBadRequest},
		{"an empty tool", jsonType, `{"approver": "support", "tool": "", "subject": "s"}`, http.StatusBadRequest},
		{"no subject", jsonType, `{"approver": "support", "tool": "t.v1.x"}`, http.StatusBadRequest},
		{"a subject with a control character", jsonType, `{"approver": "support", "tool": "t.v1.x", "subject": "s\u0007"}`, http.StatusBadRequest},
		{"a material path that is not field names", jsonType, `{"approver": "support", "tool": "t.v1.x", "subject": "s", "material": {"a=b": "c"}}`, http.StatusBadRequest},
		{"an unknown key", jsonType, `{"approver": "support", "tool": "t.v1.x", "subject": "s", "act": "x"}`, http.StatusBadRequest},
		{"a key in another case", jsonType, `{"approver": "support", "Tool": "t.v1.x", "subject": "s"}`, http.StatusBadRequest},
		{"a repeated key", jsonType, `{"approver": "support", "tool": "t.v1.x", "tool": "t.v1.y", "subject": "s"}`, http.StatusBadRequest},
		{"a repeated material path", jsonType, `{"approver": "support", "tool": "t.v1.x", "subject": "s", "material": {"a": "1", "a": "2"}}`, http.StatusBadRequest},
		{"a material text that is a number", jsonType, `{"approver": "support", "tool": "t.v1.x", "subject": "s", "material": {"a": 1}}`, http.StatusBadRequest},
		{"material that is a list", jsonType, `{"approver": "support", "tool": "t.v1.x", "subject": "s", "material": ["a"]}`, http.StatusBadRequest},
		{"a tool that is a number", jsonType, `{"approver": "support", "tool": 7, "subject": "s"}`, http.StatusBadRequest},
		{"a tool that is an object", jsonType, `{"approver": "support", "tool": {}, "subject": "s"}`, http.StatusBadRequest},
		{"a second JSON value", jsonType, `{"approver": "support", "tool": "t.v1.x", "subject": "s"} {}`, http.StatusBadRequest},
		{"a body cut short", jsonType, `{"approver": "support", "tool": "t.v1.x"`, http.StatusBadRequest},
		{"an empty body", jsonType, ``, http.StatusBadRequest},
		{"a list", jsonType, `[]`, http.StatusBadRequest},
		{"not JSON", jsonType, `approver=support&tool=t.v1.x&subject=s`, http.StatusBadRequest},
		{"invalid UTF-8", jsonType, "{\"approver\": \"support\", \"tool\": \"t.v1.x\", \"subject\": \"s\", \"material\": {\"a\": \"\xff\"}}", http.StatusBadRequest},
		{"a form", "application/x-www-form-urlencoded", `approver=support`, http.StatusUnsupportedMediaType},
		{"plain text", "text/plain", paymentBody, http.StatusUnsupportedMediaType},
		{"a body over the bound", jsonType, `{"approver": "support", "tool": "t.v1.x", "subject": "` + strings.Repeat("s", idp.MaxGrantBody) + `"}`, http.StatusRequestEntityTooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := postGrant(t, ctx, srv, c.contentType, c.body)
			if res.status != c.status {
				t.Fatalf("status %d, want %d: %s", res.status, c.status, res.body)
			}
			mediaType, _, err := mime.ParseMediaType(res.header.Get("Content-Type"))
			if err != nil || mediaType != "text/plain" {
				t.Errorf("Content-Type %q, want text/plain", res.header.Get("Content-Type"))
			}
			body := strings.TrimSuffix(string(res.body), "\n")
			if c.status == http.StatusOK {
				if strings.Count(body, ".") != 2 || strings.ContainsAny(body, " \r\n") {
					t.Errorf("body is not exactly a compact JWS: %q", res.body)
				}
				if got := res.header.Get("Cache-Control"); got != "no-store" {
					t.Errorf("Cache-Control %q, want no-store", got)
				}
				return
			}
			if body == "" || len(body) > 200 || strings.Contains(body, "\n") {
				t.Errorf("error body is not one short line: %q", res.body)
			}
		})
	}
}

func TestAGrantOverHTTPIsTheGrantIssuedInCode(t *testing.T) {
	ctx := testContext(t)
	i := newIdP(t, idp.Options{Now: fixedClock})
	srv := start(t, i)
	res := postGrant(t, ctx, srv, "application/json", paymentBody)
	if res.status != http.StatusOK {
		t.Fatalf("POST /grant: %d %s", res.status, res.body)
	}
	inCode, err := i.Grant(paymentGrant())
	if err != nil {
		t.Fatal(err)
	}
	overHTTP, httpJTI := grantClaimsOf(t, string(res.body))
	direct, codeJTI := grantClaimsOf(t, inCode)
	if g, w := asJSON(t, overHTTP), asJSON(t, direct); g != w {
		t.Errorf("over HTTP:\n%s\nin code:\n%s", g, w)
	}
	if httpJTI == codeJTI {
		t.Errorf("two grants share jti %q", httpJTI)
	}
	if _, err := verifyGrant(t, ctx, srv, i, string(res.body), jwt.WithClock(jwt.ClockFunc(fixedClock))); err != nil {
		t.Errorf("the grant served over HTTP does not verify: %v", err)
	}

	// A GrantRequest marshalled by a Go client is a body the IdP accepts, and means the same.
	for _, r := range []idp.GrantRequest{paymentGrant(), {Approver: "support", Tool: "t.v1.x", Subject: "s"}} {
		body, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		res := postGrant(t, ctx, srv, "application/json", string(body))
		if res.status != http.StatusOK {
			t.Fatalf("POST /grant %s: %d %s", body, res.status, res.body)
		}
		inCode, err := i.Grant(r)
		if err != nil {
			t.Fatal(err)
		}
		overHTTP, _ := grantClaimsOf(t, string(res.body))
		direct, _ := grantClaimsOf(t, inCode)
		if g, w := asJSON(t, overHTTP), asJSON(t, direct); g != w {
			t.Errorf("%s over HTTP:\n%s\nin code:\n%s", body, g, w)
		}
	}
}

func TestGrantIsServedOnlyToPOST(t *testing.T) {
	ctx := testContext(t)
	srv := start(t, newIdP(t, idp.Options{}))
	for _, method := range []string{http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		res := do(t, ctx, method, srv.URL()+idp.GrantPath)
		if res.status != http.StatusMethodNotAllowed {
			t.Errorf("%s /grant: status %d, want 405", method, res.status)
		}
		if allow := res.header.Get("Allow"); !strings.Contains(allow, http.MethodPost) {
			t.Errorf("%s /grant: Allow %q does not name POST", method, allow)
		}
	}
}
