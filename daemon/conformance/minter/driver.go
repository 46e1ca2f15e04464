package minter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// MaxAnswerBytes is the most of a minter's answer read.
const MaxAnswerBytes = 64 << 10

// Driver mints what a case asks of one minter. A minter's refusal is a
// *Refused; any other error (unreachable, a 5xx, an answer that cannot be
// read) is the minter's failure, never a refusal, so a minter that is down
// cannot pass a refusal case.
type Driver interface {
	MintToken(ctx context.Context, c *Case) (string, error)
	MintGrant(ctx context.Context, c *Case) (string, error)
}

// Refused is a minter's refusal: a 4xx answer.
type Refused struct {
	Status int
	// Body is the start of the answer, for the report.
	Body string
}

func (r *Refused) Error() string { return fmt.Sprintf("refused with %d: %s", r.Status, r.Body) }

// GetDriver drives a minter of ShapeGet at Endpoint (the dev identity
// provider: devkit/idp's TokenPath and GrantPath).
type GetDriver struct {
	Endpoint string
	Client   *http.Client
}

// MintToken is GET Endpoint/token with the case's mint values as the query,
// answering the body (text/plain) on 200.
func (d *GetDriver) MintToken(ctx context.Context, c *Case) (string, error) {
	q := url.Values{}
	for k, v := range c.Mint {
		q.Set(k, fmt.Sprint(v))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.Endpoint+"/token?"+q.Encode(), nil)
	if err != nil {
		return "", err
	}
	body, err := exchange(d.Client, req)
	return strings.TrimSpace(string(body)), err
}

// MintGrant is a POST of the case's mint values as a JSON object to
// Endpoint/grant, answering the body (text/plain) on 200.
func (d *GetDriver) MintGrant(ctx context.Context, c *Case) (string, error) {
	b, err := json.Marshal(c.Mint)
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.Endpoint+"/grant", bytes.NewReader(b))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	body, err := exchange(d.Client, req)
	return strings.TrimSpace(string(body)), err
}

// exchange sends req: the body on 2xx, a *Refused on 4xx, an error
// otherwise.
func exchange(client *http.Client, req *http.Request) ([]byte, error) {
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("the minter cannot be reached: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxAnswerBytes))
	if err != nil {
		return nil, fmt.Errorf("the minter's answer cannot be read: %w", err)
	}
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return body, nil
	case resp.StatusCode >= 400 && resp.StatusCode < 500:
		return nil, &Refused{Status: resp.StatusCode, Body: clip(string(body))}
	}
	return nil, fmt.Errorf("the minter failed with %d: %s", resp.StatusCode, clip(string(body)))
}

func clip(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// isRefusal reports whether err is a minter's refusal, with want's status
// when want is not zero.
func isRefusal(err error, want int) error {
	var r *Refused
	switch {
	case err == nil:
		return errors.New("the minter minted it: it must refuse")
	case !errors.As(err, &r):
		return fmt.Errorf("the minter did not refuse, it failed: %v", err)
	case want != 0 && r.Status != want:
		return fmt.Errorf("the minter refused with %d, want %d", r.Status, want)
	}
	return nil
}
