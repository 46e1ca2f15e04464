package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// approvalPollInterval is how often garm call --wait asks garmd where its
// request stands.
const approvalPollInterval = time.Second

// approvalRef is where an approval request is decided, as garmd's
// grant_required body names it.
type approvalRef struct {
	ID  string `json:"id"`
	URL string `json:"url"`
}

// approvalOf is the request a refusal names: a 403 grant_required whose body
// carries approval {id, url}.
func approvalOf(status int, body []byte) (approvalRef, bool) {
	var b struct {
		Code     string       `json:"code"`
		Approval *approvalRef `json:"approval"`
	}
	if status != http.StatusForbidden || json.Unmarshal(body, &b) != nil || b.Code != "grant_required" ||
		b.Approval == nil || b.Approval.ID == "" {
		return approvalRef{}, false
	}
	return *b.Approval, true
}

// awaitDecision asks garmd (GET /approvals/<id>) where the caller's request
// id stands until it is no longer pending or t.wait runs out, and answers
// the status: approved, denied or expired.
func awaitDecision(ctx context.Context, t callTarget, id string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, t.wait)
	defer cancel()
	tick := time.NewTicker(approvalPollInterval)
	defer tick.Stop()
	for {
		status, err := approvalStatus(ctx, t, id)
		switch {
		case err != nil && ctx.Err() == nil:
			return "", fmt.Errorf("asking after request %s: %w", id, err)
		case err == nil && status != "pending":
			return status, nil
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("no decision on request %s within %s (--wait-timeout); call again with --approval %s once it is decided", id, t.wait, id)
		case <-tick.C:
		}
	}
}

// approvalStatus is one GET /approvals/<id> as the caller.
func approvalStatus(ctx context.Context, t callTarget, id string) (string, error) {
	token, err := fetchToken(ctx, t.idp, t.persona, t.agent)
	if err != nil {
		return "", fmt.Errorf("a token for %s: %w", t.persona, err)
	}
	u := strings.TrimRight(t.garmd, "/") + "/approvals/" + url.PathEscape(id)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var b struct {
		Status string `json:"status"`
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s answered %s", u, resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&b); err != nil || b.Status == "" {
		return "", fmt.Errorf("%s answered no status", u)
	}
	return b.Status, nil
}
