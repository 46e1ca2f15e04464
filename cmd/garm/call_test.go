package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

func TestGarmCallPrintsTheStatusTheEventIDTheAnswerAndTheLedgerRow(t *testing.T) {
	manifest, _ := calculatorCatalogue(t)
	p := startPlane(t, manifest)
	code, out := garm(t, p, "call", "calc.v1.add", "--as", "outsider", `{"a": 40, "b": 2.5}`)
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	mustContain(t, out, "HTTP 200 OK", "\n  \"sum\": 42.5\n", "ledger ok")
	if !regexp.MustCompile(`(?m)^event [0-9A-Za-z-]{8,}$`).MatchString(out) {
		t.Errorf("no event id:\n%s", out)
	}
	// Flags after the request, as the usage line writes them, are flags.
	code, out = garm(t, p, "call", "/calc.v1.Calculator/Add", "--as", "outsider", `{"a": 2, "b": 3}`, "--agent", "")
	if code != exitOK {
		t.Fatalf("flags after the request: exit %d:\n%s", code, out)
	}
	mustContain(t, out, "HTTP 200 OK", "\n  \"sum\": 5\n")
}

func TestGarmCallShowsTheCodeAndDetailOfARefusalThatTheWireDoesNotCarry(t *testing.T) {
	manifest, _ := calculatorCatalogue(t)
	p := startPlane(t, manifest)
	code, out := garm(t, p, "call", "calc.v1.divide", "--as", "outsider", `{"dividend": 1, "divisor": 0}`)
	if code != exitFailed {
		t.Fatalf("a refused call exited %d:\n%s", code, out)
	}
	m := regexp.MustCompile(`(?m)^ledger (denied|error) code=(\S+) detail="(.+)"`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no ledger row with a code and a detail:\n%s", out)
	}
	body := out[:strings.Index(out, "ledger ")]
	if strings.Contains(body, m[3]) {
		t.Errorf("the detail %q reached the caller on the wire:\n%s", m[3], body)
	}
}

func TestGarmCallNamesTheToolsOfTheCatalogueWhenTheToolIsUnknown(t *testing.T) {
	manifest, _ := calculatorCatalogue(t)
	p := startPlane(t, manifest)
	code, out := garm(t, p, "call", "calc.v1.multiply", "--as", "outsider")
	if code != exitFailed {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	mustContain(t, out, "no tool calc.v1.multiply", "calc.v1.add")
}

func TestGarmTokenPrintsAJWTForAPersonaAndForAnAgentActingForIt(t *testing.T) {
	manifest, _ := calculatorCatalogue(t)
	p := startPlane(t, manifest)
	jwt := regexp.MustCompile(`^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\n$`)
	for _, args := range [][]string{{"token", "support"}, {"token", "support", "--agent", "assistant"}} {
		code, out := garm(t, p, args...)
		if code != exitOK || !jwt.MatchString(out) {
			t.Errorf("%v: exit %d, %q", args, code, out)
		}
	}
	if code, out := garm(t, p, "token", "nobody"); code != exitFailed {
		t.Errorf("a token for an unknown persona: exit %d, %q", code, out)
	}
}

// A call over its tool's limit prints, under its status, when to call
// again: Retry-After and the RateLimit-* fields garmd answered, as they came.
func TestGarmCallPrintsRetryAfterAndTheRateLimitFieldsOfACallOverItsLimit(t *testing.T) {
	manifest, _ := calculatorCatalogue(t)
	f, err := os.OpenFile(manifest, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString("limits:\n  - id: once_a_minute\n    tool: calc.v1.add\n    description: Each person adds once a minute.\n" +
		"    key: [tenant, subject]\n    rate: {count: 1, window: minute}\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	p := startPlane(t, manifest)
	code, out := garm(t, p, "call", "calc.v1.add", "--as", "outsider", `{"a": 1, "b": 2}`)
	if code != exitOK || strings.Contains(out, "Retry-After") || strings.Contains(out, "RateLimit-") {
		t.Fatalf("the first call: exit %d, want 0 and no retry fields:\n%s", code, out)
	}
	code, out = garm(t, p, "call", "calc.v1.add", "--as", "outsider", `{"a": 1, "b": 2}`)
	if code != exitFailed {
		t.Fatalf("the call over the limit exited %d:\n%s", code, out)
	}
	mustContain(t, out, "HTTP 429 Too Many Requests\nRetry-After: ", "\nRateLimit-Limit: 1\nRateLimit-Remaining: 0\nRateLimit-Reset: ",
		`"code": "rate_limited"`, `"limit": "once_a_minute"`, `ledger denied detail="limit once_a_minute`)
	m := regexp.MustCompile(`(?m)^Retry-After: (\d+)\nRateLimit-Limit: 1\nRateLimit-Remaining: 0\nRateLimit-Reset: (\d+)$`).FindStringSubmatch(out)
	if m == nil || m[1] == "0" || m[1] != m[2] {
		t.Errorf("Retry-After and RateLimit-Reset are not the same positive number of seconds:\n%s", out)
	}
}
