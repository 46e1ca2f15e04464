package approvalstest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"time"

	"github.com/garm-dev/garm/approvals"
	"github.com/garm-dev/garm/approvals/pending"
)

// Approver is one signed-in approver's cookie jar.
type Approver struct {
	client *http.Client
	base   string
}

// SignIn signs persona in to the approvals service at base through the dev identity provider's
// picker, which the service's /login redirects to.
func SignIn(ctx context.Context, base, persona string) (*Approver, error) {
	jar, _ := cookiejar.New(nil)
	a := &Approver{client: &http.Client{Jar: jar, Timeout: 30 * time.Second}, base: base}
	resp, err := a.do(ctx, http.MethodGet, base+approvals.LoginPath, nil)
	if err != nil {
		return nil, err
	}
	picker := resp.Request.URL
	if resp.StatusCode != http.StatusOK || picker.Path != "/authorize" {
		return nil, fmt.Errorf("sign-in did not reach the identity provider's picker: %d at %s", resp.StatusCode, picker)
	}
	form := picker.Query()
	form.Set("persona", persona)
	target := *picker
	target.RawQuery = ""
	resp, err = a.do(ctx, http.MethodPost, target.String(), form)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK || !strings.Contains(resp.body, "Signed in") {
		return nil, fmt.Errorf("sign-in as %s: %d %s", persona, resp.StatusCode, resp.body)
	}
	return a, nil
}

type response struct {
	*http.Response
	body string
}

func (a *Approver) do(ctx context.Context, method, u string, form url.Values) (response, error) {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return response{}, err
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return response{resp, string(b)}, err
}

// Page answers the status and body of a page of the service, path under its base URL.
func (a *Approver) Page(ctx context.Context, path string) (int, string, error) {
	resp, err := a.do(ctx, http.MethodGet, a.base+path, nil)
	if err != nil {
		return 0, "", err
	}
	return resp.StatusCode, resp.body, nil
}

// Decide opens request id's page and posts verdict with the page's CSRF token, answering the
// status of the answer the browser lands on: 200 once decided.
func (a *Approver) Decide(ctx context.Context, id string, verdict pending.Verdict) (int, error) {
	status, body, err := a.Page(ctx, approvals.RequestsPath+id)
	if err != nil {
		return 0, err
	}
	if status != http.StatusOK {
		return status, nil
	}
	token, ok := CSRF(body)
	if !ok {
		return 0, errors.New("the request's page holds no CSRF token")
	}
	action := "/approve"
	if verdict == pending.Denied {
		action = "/deny"
	}
	resp, err := a.do(ctx, http.MethodPost, a.base+approvals.RequestsPath+id+action, url.Values{"csrf": {token}})
	if err != nil {
		return 0, err
	}
	return resp.StatusCode, nil
}

// CSRF is the CSRF token of a page's forms.
func CSRF(body string) (string, bool) {
	const marker = `name="csrf" value="`
	i := strings.Index(body, marker)
	if i < 0 {
		return "", false
	}
	rest := body[i+len(marker):]
	end := strings.IndexByte(rest, '"')
	if end < 0 {
		return "", false
	}
	return rest[:end], true
}
