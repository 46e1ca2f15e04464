package deny_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/deny"
	"github.com/garm-dev/garm/runtime/wire"
)

func TestEachCodeAnswersWithTheStatusAndSpellingOfTheSpecsTable(t *testing.T) {
	cases := []struct {
		err    error
		status int
		code   string
	}{
		{deny.Deny(deny.MethodNotAllowed, "GET"), http.StatusMethodNotAllowed, "unimplemented"},
		{deny.Deny(deny.BodyTooLarge, ""), http.StatusRequestEntityTooLarge, "invalid_argument"},
		{deny.Fail(deny.NoCatalogue, "no_catalogue", ""), http.StatusServiceUnavailable, "unavailable"},
		{deny.Deny(deny.Unauthenticated, "expired"), http.StatusUnauthorized, "unauthenticated"},
		{deny.Deny(deny.NotFound, "no route"), http.StatusNotFound, "not_found"},
		{deny.Deny(deny.InvalidArgument, "bad body"), http.StatusBadRequest, "invalid_argument"},
		{deny.Deny(deny.PermissionDenied, "a.b"), http.StatusForbidden, "permission_denied"},
		{deny.Deny(deny.GrantRequired, ""), http.StatusForbidden, "grant_required"},
		{deny.Fail(deny.AuditUnavailable, "audit", ""), http.StatusServiceUnavailable, "unavailable"},
		{deny.Fail(deny.ToolUnavailable, "no_responders", ""), http.StatusServiceUnavailable, "unavailable"},
		{deny.Fail(deny.DeadlineExceeded, "timeout", ""), http.StatusGatewayTimeout, "deadline_exceeded"},
		{deny.Fail(deny.Internal, "panic", ""), http.StatusInternalServerError, "internal"},
		{deny.Deny(deny.MalformedHeaders, "Authorization twice"), http.StatusBadRequest, "invalid_argument"},
		{deny.Fail(deny.Overloaded, "overloaded", ""), http.StatusServiceUnavailable, "unavailable"},
		{deny.Fail(deny.ShuttingDown, "shutting_down", ""), http.StatusServiceUnavailable, "unavailable"},
		{deny.Deny(deny.BodyTimeout, ""), http.StatusRequestTimeout, "invalid_argument"},
		{errors.New("anything else"), http.StatusInternalServerError, "internal"},
	}
	for _, c := range cases {
		status, body := deny.Wire(c.err)
		if status != c.status {
			t.Errorf("%v: status %d, want %d", c.err, status, c.status)
		}
		var got map[string]any
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("%v: body %q: %v", c.err, body, err)
		}
		if got["code"] != c.code || got["message"] == "" || len(got) != 2 {
			t.Errorf("%v: body %s, want exactly code %q and a message", c.err, body, c.code)
		}
		if deny.WireCode(c.err) != c.code {
			t.Errorf("%v: WireCode %q, want %q", c.err, deny.WireCode(c.err), c.code)
		}
	}
}

func TestEveryToolRefusalCodePassesThroughWithAStaticSentence(t *testing.T) {
	for _, code := range wire.RefusalCodes() {
		secret := "the tool's own words " + code
		err := deny.Refuse(code, secret)
		status, body := deny.Wire(err)
		if fmt.Sprint(status) != code {
			t.Errorf("tool code %s answered %d", code, status)
		}
		if strings.Contains(string(body), secret) {
			t.Errorf("tool code %s: the tool's words reached the body %s", code, body)
		}
		var got map[string]string
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		if got["code"] != "tool_refused" || got["tool_code"] != code || got["message"] == "" {
			t.Errorf("tool code %s: body %s", code, body)
		}
		if deny.Outcome(err) != "error" {
			t.Errorf("a tool refusal's outcome is %q", deny.Outcome(err))
		}
	}
	status, _ := deny.Wire(deny.Refuse("500", "not a refusal code"))
	if status != http.StatusInternalServerError {
		t.Errorf("a code outside the nine answered %d", status)
	}
}

func TestTheDetailNeverReachesTheWire(t *testing.T) {
	const detail = "kid k-7 unknown for issuer https://idp.example"
	for _, err := range []error{deny.Deny(deny.Unauthenticated, detail), deny.Fail(deny.Internal, "panic", detail)} {
		_, body := deny.Wire(err)
		if strings.Contains(string(body), detail) || strings.Contains(string(body), "k-7") {
			t.Errorf("the detail reached the body: %s", body)
		}
		kind, got := deny.Detail(err)
		if got != detail {
			t.Errorf("Detail = %q, %q", kind, got)
		}
	}
}

func TestOutcomesSeparateTheCallersFaultFromOurs(t *testing.T) {
	if deny.Outcome(nil) != "ok" || deny.Outcome(deny.Deny(deny.NotFound, "")) != "denied" ||
		deny.Outcome(deny.Fail(deny.DeadlineExceeded, "timeout", "")) != "error" ||
		deny.Outcome(errors.New("x")) != "error" {
		t.Fatal("outcomes do not follow the taxonomy")
	}
	wrapped := fmt.Errorf("step: %w", deny.Deny(deny.PermissionDenied, "x"))
	if deny.Outcome(wrapped) != "denied" {
		t.Fatal("a wrapped denial lost its outcome")
	}
}

func TestExtraKeysJoinTheBody(t *testing.T) {
	err := &deny.Denied{Code: deny.GrantRequired, Extra: map[string]any{"tool": "p.v1.pay", "material_fields": []string{}, "max_grant_age_seconds": 300}}
	_, body := deny.Wire(err)
	want := `{"code":"grant_required","material_fields":[],"max_grant_age_seconds":300,"message":"This call needs a human's approval grant.","tool":"p.v1.pay"}`
	if string(body) != want {
		t.Fatalf("body\n%s\nwant\n%s", body, want)
	}
}

// A table over the codes (deny.Codes) tells them apart by name, and a
// refusal's body by its message: each code has its own of both.
func TestEveryCodeHasANameAndAMessageOfItsOwn(t *testing.T) {
	names, messages := map[string]deny.Code{}, map[string]deny.Code{}
	for i, c := range deny.Codes() {
		if int(c) != i {
			t.Fatalf("code %d is listed at %d", c, i)
		}
		if other, ok := names[c.Name()]; ok || strings.HasPrefix(c.Name(), "Code(") {
			t.Errorf("code %d is named %q, as %d is", c, c.Name(), other)
		}
		names[c.Name()] = c
		if c == deny.ToolRefused {
			continue // the tool's code picks its message
		}
		if other, ok := messages[c.Message()]; ok || c.Message() == "" {
			t.Errorf("%s says %q, as %s does", c.Name(), c.Message(), other.Name())
		}
		messages[c.Message()] = c
	}
}
