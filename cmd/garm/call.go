package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/garm-dev/garm/devkit/devplane"
)

// eventIDHeader is the header garmd answers a call's event id in.
const eventIDHeader = "Garm-Event-Id"

var (
	defaultGarmd = "http://" + devplane.DefaultListen
	defaultDev   = "http://" + devplane.DefaultDevListen
)

// callTarget is where garm call sends a call and what it sends.
type callTarget struct {
	garmd, idp, dev string
	// devSecretFile holds the dev endpoint's secret; empty: the file the
	// plane at dev writes (devplane.DevSecretFile).
	devSecretFile string
	tool, persona string
	agent, grant  string
	// approval is a request id to present (Garm-Approval).
	approval string
	// wait, when positive, is how long to wait for a human to decide a
	// request the call opened or presented, then retry with it.
	wait time.Duration
	body string
}

// runCall calls a tool as a persona through garmd, like curl, and prints
// the status, when to call again if garmd said (Retry-After and the
// RateLimit-* fields), the event id, the answer as indented JSON and,
// against a dev plane, the ledger row: its outcome and, for a refusal or
// failure, the code and the detail garmd recorded.
func runCall(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("garm call", flag.ContinueOnError)
	flags.SetOutput(stderr)
	flags.Usage = func() {
		fmt.Fprintln(stderr, "usage: garm call TOOL --as PERSONA ['{json}'] [--agent AGENT] [--grant GRANT | --approval ID] [--wait [--wait-timeout D]] [--garmd URL] [--idp URL] [--dev URL] [--dev-secret-file FILE]\n\n"+
			"TOOL is a tool's name (hr.v1.get_employee) or route (/hr.v1.HRService/GetEmployee). Flags:")
		flags.PrintDefaults()
	}
	var t callTarget
	flags.StringVar(&t.persona, "as", "", "the `persona` calling (required)")
	flags.StringVar(&t.agent, "agent", "", "the `agent` acting for the persona")
	flags.StringVar(&t.grant, "grant", "", "an approval `grant` (the Garm-Grant header)")
	flags.StringVar(&t.approval, "approval", "", "an approval request's `id` to present (the Garm-Approval header)")
	wait := flags.Bool("wait", false, "when the call needs a human's approval, print where it is decided, wait for the decision and retry with it")
	flags.DurationVar(&t.wait, "wait-timeout", 10*time.Minute, "how long --wait waits for a decision")
	flags.StringVar(&t.garmd, "garmd", envOr("GARM_URL", defaultGarmd), "garmd's tool plane `URL` ($GARM_URL)")
	flags.StringVar(&t.idp, "idp", envOr("GARM_IDP", defaultIdP), "the dev identity provider's `URL` ($GARM_IDP)")
	flags.StringVar(&t.dev, "dev", envOr("GARM_DEV", defaultDev), "the dev plane's endpoint `URL`, for the ledger row; empty: none ($GARM_DEV)")
	flags.StringVar(&t.devSecretFile, "dev-secret-file", os.Getenv("GARM_DEV_SECRET_FILE"), "the `file` holding the dev endpoint's secret; default: the one the plane at --dev writes ($GARM_DEV_SECRET_FILE)")
	tool, rest := leadingArg(args)
	// Flags may follow the request, as the usage line writes them: the
	// flag package stops at the first argument that is not one, so parsing
	// resumes after each.
	var positional []string
	for {
		if err := flags.Parse(rest); errors.Is(err, flag.ErrHelp) {
			return exitOK
		} else if err != nil {
			return exitUsage
		}
		if flags.NArg() == 0 {
			break
		}
		positional, rest = append(positional, flags.Arg(0)), flags.Args()[1:]
	}
	if tool == "" && len(positional) > 0 {
		tool, positional = positional[0], positional[1:]
	}
	if !*wait {
		t.wait = 0
	}
	if tool == "" || t.persona == "" || len(positional) > 1 || (*wait && t.wait <= 0) || (t.grant != "" && t.approval != "") {
		flags.Usage()
		return exitUsage
	}
	t.tool, t.body = tool, "{}"
	if len(positional) == 1 {
		t.body = positional[0]
	}
	ok, err := call(ctx, t, stdout)
	if err != nil {
		fmt.Fprintln(stderr, "garm call:", err)
		return exitFailed
	}
	if !ok {
		return exitFailed
	}
	return exitOK
}

// call makes the call and prints what it learned; ok is whether garmd
// answered 2xx. With t.wait, a call refused for want of a grant with an
// approval request waits for the request's decision and, once approved,
// is made again presenting it.
func call(ctx context.Context, t callTarget, w io.Writer) (ok bool, err error) {
	if !json.Valid([]byte(t.body)) {
		return false, fmt.Errorf("the request %q is not JSON", t.body)
	}
	route, err := resolveRoute(ctx, t)
	if err != nil {
		return false, err
	}
	status, body, err := post(ctx, t, route, w)
	if err != nil || status/100 == 2 || t.wait <= 0 {
		return status/100 == 2, err
	}
	ref, asked := approvalOf(status, body)
	if !asked {
		return false, nil
	}
	fmt.Fprintf(w, "waiting up to %s for a decision on request %s at\n  %s\n", t.wait, ref.ID, ref.URL)
	verdict, err := awaitDecision(ctx, t, ref.ID)
	if err != nil {
		return false, err
	}
	fmt.Fprintf(w, "request %s: %s\n", ref.ID, verdict)
	if verdict != "approved" {
		return false, nil
	}
	t.approval, t.grant = ref.ID, ""
	status, _, err = post(ctx, t, route, w)
	return status/100 == 2, err
}

// post makes the call once and prints its answer and, against a dev
// plane, its ledger row.
func post(ctx context.Context, t callTarget, route string, w io.Writer) (int, []byte, error) {
	token, err := fetchToken(ctx, t.idp, t.persona, t.agent)
	if err != nil {
		return 0, nil, fmt.Errorf("a token for %s: %w", t.persona, err)
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(t.garmd, "/")+route, strings.NewReader(t.body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	if t.grant != "" {
		req.Header.Set("Garm-Grant", t.grant)
	}
	if t.approval != "" {
		req.Header.Set("Garm-Approval", t.approval)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%w (is garm dev running?)", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return 0, nil, err
	}
	eventID := resp.Header.Get(eventIDHeader)
	fmt.Fprintf(w, "HTTP %s\n", resp.Status)
	printRetryHeaders(w, resp.Header)
	fmt.Fprintf(w, "event %s\n", orNone(eventID))
	fmt.Fprintln(w, prettyJSON(body))
	if t.dev != "" && eventID != "" {
		row, err := ledgerRow(ctx, t, eventID)
		if err != nil {
			fmt.Fprintf(w, "ledger: not read (%v)\n", err)
		} else {
			fmt.Fprintln(w, ledgerSummary(row))
		}
	}
	return resp.StatusCode, body, nil
}

// retryHeaders are the header fields that say when to call again, in the
// spelling they are printed in: Retry-After on a 429 or a 503, and the
// rate-limit fields on a 429 rate_limited.
var retryHeaders = []string{"Retry-After", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"}

// printRetryHeaders prints each of retryHeaders the answer carries, one a
// line as it came, so that a caller told to wait sees how long.
func printRetryHeaders(w io.Writer, h http.Header) {
	for _, name := range retryHeaders {
		if v := h.Get(name); v != "" {
			fmt.Fprintf(w, "%s: %s\n", name, v)
		}
	}
}

// resolveRoute is the route of t.tool: itself when it is one, else the
// route the dev plane lists for the name. Outside a dev plane, name the
// route.
func resolveRoute(ctx context.Context, t callTarget) (string, error) {
	if strings.HasPrefix(t.tool, "/") {
		return t.tool, nil
	}
	if t.dev == "" {
		return "", fmt.Errorf("%s: with no dev plane (--dev), name the tool by its route, /<package>.<Service>/<Method>", t.tool)
	}
	var routes []devplane.Route
	if err := getDevJSON(ctx, t, "/tools", &routes); err != nil {
		return "", fmt.Errorf("the dev plane's tools: %w (is garm dev running? or name the route)", err)
	}
	var names []string
	for _, r := range routes {
		if r.Tool == t.tool {
			return r.Method, nil
		}
		names = append(names, r.Tool)
	}
	return "", fmt.Errorf("the catalogue served has no tool %s; it has %s", t.tool, strings.Join(names, ", "))
}

// ledgerRow is the dev plane's ledger row for the event, waiting a little
// for it to land: garmd writes it after it answers.
func ledgerRow(ctx context.Context, t callTarget, eventID string) (devplane.Row, error) {
	var row devplane.Row
	err := getDevJSON(ctx, t, "/ledger/"+url.PathEscape(eventID)+"?wait=10s", &row)
	return row, err
}

// ledgerSummary is the row in one line: outcome, code, detail.
func ledgerSummary(r devplane.Row) string {
	line := "ledger " + devplane.LedgerField(r.Outcome)
	if r.Code != "" {
		line += " code=" + devplane.LedgerField(r.Code)
	}
	if r.Detail != "" {
		line += fmt.Sprintf(" detail=%q", r.Detail)
	}
	if r.RedactionCount > 0 || r.DisclosedCount > 0 {
		line += fmt.Sprintf(" redacted=%d disclosed=%d", r.RedactionCount, r.DisclosedCount)
	}
	return line
}

// getDevJSON reads path of the dev endpoint into v, with the run's secret.
func getDevJSON(ctx context.Context, t callTarget, path string, v any) error {
	secret, err := devplane.ReadDevSecret(t.dev, t.devSecretFile)
	if err != nil {
		return err
	}
	u := strings.TrimRight(t.dev, "/") + path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set(devplane.DevSecretHeader, secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s", u, resp.Status)
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(v)
}

// prettyJSON is body indented when it is JSON, else as it came.
func prettyJSON(body []byte) string {
	var b bytes.Buffer
	if json.Indent(&b, body, "", "  ") == nil {
		return b.String()
	}
	return strings.TrimRight(string(body), "\n")
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
