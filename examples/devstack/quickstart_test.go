package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestTheQuickStartNamesEveryURLAndPersona(t *testing.T) {
	s := startStack(t, testOptions(t))
	text := s.QuickStart()
	urls := s.URLs()
	for _, u := range []string{urls.Garmd, urls.Admin, urls.IdP, urls.NATS, urls.MCP, urls.Approvals} {
		if !strings.Contains(text, u) {
			t.Errorf("the quick-start does not name %s", u)
		}
	}
	personas := s.IdP().Personas()
	named := map[string]bool{}
	for _, m := range regexp.MustCompile(`[?&](user|as)=([A-Za-z0-9_-]+)`).FindAllStringSubmatch(text, -1) {
		named[m[2]] = true
		_, user := personas.Users[m[2]]
		_, agent := personas.Agents[m[2]]
		if (m[1] == "user" && !user) || (m[1] == "as" && !agent) {
			t.Errorf("the quick-start asks for a token for %s=%s, which the personas do not hold", m[1], m[2])
		}
	}
	d := bankDemo()
	for _, handle := range []string{d.support, d.analyst, d.outsider, d.treasurer, d.approver, d.agent} {
		if !strings.Contains(text, handle) {
			t.Errorf("the quick-start does not name the persona %s", handle)
		}
	}
	for _, handle := range []string{d.support, d.analyst, d.outsider, d.treasurer} {
		if !named[handle] {
			t.Errorf("the quick-start gets no token for %s", handle)
		}
	}
	if strings.Contains(text, "<no value>") {
		t.Errorf("the quick-start has an empty template field:\n%s", text)
	}
}

// TestEveryQuickStartCommandRuns reads the quick-start as a shell would and
// runs each command against the live stack, as curl would: every command
// must split into words, name a route that exists, and answer what the
// line after it says.
func TestEveryQuickStartCommandRuns(t *testing.T) {
	s := startStack(t, testOptions(t))
	text := s.QuickStart()
	// The MCP endpoint is on the tool plane beside the routes.
	routes := map[string]bool{listToolsRoute: true, "/mcp": true}
	for _, tool := range s.Catalogue().Artifact.Tools() {
		routes[tool.Method] = true
	}
	urls := s.URLs()
	c := newClient(t, s)
	vars := map[string]string{}
	cmds := commands(t, text)
	if len(cmds) < 10 {
		t.Fatalf("the quick-start has %d commands:\n%s", len(cmds), text)
	}
	calls := 0
	for _, cmd := range cmds {
		variable, line := cmd.assigns, cmd.line
		words, err := shellWords(line, vars)
		if err != nil {
			t.Fatalf("%q does not split into words: %v", line, err)
		}
		req, err := curlRequest(words)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		switch {
		case strings.HasPrefix(req.URL.String(), urls.IdP+"/"):
			if p := req.URL.Path; p != "/token" {
				t.Errorf("%q calls the IdP at %s, which it does not serve", line, p)
			}
		case strings.HasPrefix(req.URL.String(), urls.Garmd+"/"):
			if !routes[req.URL.Path] {
				t.Errorf("%q calls %s, which is not in the catalogue", line, req.URL.Path)
			}
			calls++
		default:
			t.Fatalf("%q calls %s, which is not the stack's garmd or IdP", line, req.URL)
		}
		if cmd.repeat > 0 {
			clearOfAMinutesEnd() // the loop meets a limit of a minute's window
		}
		a := c.do(req)
		for range cmd.repeat - 1 {
			if a.status != cmd.wantStatus {
				break
			}
			if req, err = curlRequest(words); err != nil {
				t.Fatal(err)
			}
			a = c.do(req)
		}
		if cmd.approvalID {
			var refusal struct {
				Code     string
				Approval struct{ ID, URL string }
			}
			if err := json.Unmarshal([]byte(a.body), &refusal); err != nil || a.status != http.StatusForbidden || refusal.Code != "grant_required" || refusal.Approval.ID == "" {
				t.Fatalf("%q answered %d %s; want grant_required with an approval", line, a.status, a.body)
			}
			if want := urls.Approvals + "/requests/" + refusal.Approval.ID; refusal.Approval.URL != want {
				t.Errorf("the approval url is %q, want %q", refusal.Approval.URL, want)
			}
			vars[variable] = refusal.Approval.ID
			// The person the text sends to the inbox approves it there.
			approveInInbox(t, s, bankDemo().approver, refusal.Approval.ID)
			continue
		}
		if variable != "" {
			if a.status != http.StatusOK {
				t.Fatalf("%q answered %d %s", line, a.status, a.body)
			}
			vars[variable] = a.body
			continue
		}
		if cmd.wantStatus == 0 {
			t.Errorf("%q is not followed by the line saying what it answers", line)
			continue
		}
		switch {
		case cmd.repeat > 0:
			if !slices.Contains(words, loopStatusFormat) || !slices.Contains(words, "/dev/null") {
				t.Errorf("%q, in a loop, does not print each status alone (-o /dev/null -w %q)", line, loopStatusFormat)
			}
		case !cmd.pretty || !(slices.Contains(words, statusFormat) || slices.Contains(words, headerDump)):
			t.Errorf("%q does not print its HTTP status (-w %q or -D %s) and pretty JSON (| jq .)", line, statusFormat, headerDump)
		}
		if req.URL.Path == listToolsRoute && strings.Contains(line, "$OUTSIDER") {
			if !strings.Contains(a.body, `"calc.v1.`) || strings.Contains(a.body, `"accounts.v1.`) {
				t.Errorf("the outsider's listing is not the calculator's public tools alone: %s", a.body)
			}
		}
		if a.status != cmd.wantStatus {
			t.Errorf("%q answered %d %s; the quick-start says %d", line, a.status, a.body, cmd.wantStatus)
		}
		if cmd.wantCode != "" {
			var body struct{ Code string }
			if err := json.Unmarshal([]byte(a.body), &body); err != nil || body.Code != cmd.wantCode {
				t.Errorf("%q answered %s; the quick-start says %s", line, a.body, cmd.wantCode)
			}
		}
		if a.status == http.StatusTooManyRequests {
			checkRateLimited(t, line, a, bankDemo().agentLimit)
			if !slices.Contains(words, headerDump) {
				t.Errorf("%q answers 429 but does not show its header (-D %s), where Retry-After is", line, headerDump)
			}
		}
	}
	if calls < 7 {
		t.Errorf("the quick-start makes %d calls to garmd", calls)
	}
}

// command is one shell command of the quick-start: an assignment from a
// command substitution, VAR=$(curl …), or a bare curl with what it answers.
type command struct {
	line       string // the curl command, continuations joined, without | jq .
	assigns    string // the variable assigned, or ""
	pretty     bool   // piped to jq .
	wantStatus int
	wantCode   string
	// approvalID: the command's answer is a grant_required refusal whose
	// approval.id the variable takes (| jq -r .approval.id).
	approvalID bool
	// repeat is how many times a loop (for i in 1 2 3; do curl …; done)
	// makes the call, each answering wantStatus; 0: not a loop.
	repeat int
}

// statusFormat is the -w of every call: the status on stderr, so that the
// answer alone reaches jq. headerDump is -D's value where a call shows its
// answer's header, its status line first, instead; loopStatusFormat the -w
// of a call in a loop, which prints each status alone.
const (
	statusFormat     = `%{stderr}HTTP %{http_code}\n`
	headerDump       = "/dev/stderr"
	loopStatusFormat = `%{http_code}\n`
)

var (
	assignment = regexp.MustCompile(`^([A-Z_][A-Z0-9_]*)=\$\((.*)\)$`)
	answers    = regexp.MustCompile(`^#\s+-> (\d{3})(?: ([a-z_]+))?$`)
	loop       = regexp.MustCompile(`^for i in ((?:\d+ )*\d+); do (curl .*); done$`)
)

// commands are the quick-start's commands: every line that mentions curl,
// joined with its continuation lines.
func commands(t *testing.T, text string) []command {
	t.Helper()
	lines := strings.Split(text, "\n")
	var out []command
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if !strings.Contains(line, "curl") || strings.HasPrefix(line, "#") {
			if m := answers.FindStringSubmatch(line); m != nil && len(out) > 0 {
				out[len(out)-1].wantStatus, _ = strconv.Atoi(m[1])
				out[len(out)-1].wantCode = m[2]
			}
			continue
		}
		for strings.HasSuffix(line, `\`) && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, `\`) + " " + strings.TrimSpace(lines[i])
		}
		cmd := command{line: line}
		if m := loop.FindStringSubmatch(line); m != nil {
			cmd.line, cmd.repeat = m[2], len(strings.Fields(m[1]))
		}
		cmd.line, cmd.pretty = strings.CutSuffix(cmd.line, " | jq .")
		if m := assignment.FindStringSubmatch(line); m != nil {
			cmd.assigns, cmd.line = m[1], m[2]
			cmd.line, cmd.approvalID = strings.CutSuffix(cmd.line, " | jq -r .approval.id")
		}
		if !strings.HasPrefix(cmd.line, "curl ") {
			t.Fatalf("a line mentions curl but is not a curl command or VAR=$(curl …): %q", line)
		}
		out = append(out, cmd)
	}
	return out
}

// shellWords splits a command as a POSIX shell would for the forms the
// quick-start uses: single quotes (literal), double quotes (with $VAR and
// \" \\ \$), and bare words (with $VAR). Anything else a shell would treat
// specially is refused rather than guessed at.
func shellWords(line string, vars map[string]string) ([]string, error) {
	var words []string
	var word strings.Builder
	inWord := false
	expand := func(rest string) (int, error) {
		m := regexp.MustCompile(`^\$([A-Z_][A-Z0-9_]*)`).FindStringSubmatch(rest)
		if m == nil {
			return 0, fmt.Errorf("a $ that is not $VAR in %q", rest)
		}
		v, ok := vars[m[1]]
		if !ok {
			return 0, fmt.Errorf("$%s is used before it is assigned", m[1])
		}
		word.WriteString(v)
		return len(m[0]), nil
	}
	for i := 0; i < len(line); {
		switch ch := line[i]; {
		case ch == ' ' || ch == '\t':
			if inWord {
				words, inWord = append(words, word.String()), false
				word.Reset()
			}
			i++
		case ch == '\'':
			end := strings.IndexByte(line[i+1:], '\'')
			if end < 0 {
				return nil, errors.New("an unclosed single quote")
			}
			word.WriteString(line[i+1 : i+1+end])
			inWord, i = true, i+end+2
		case ch == '"':
			inWord = true
			i++
			for {
				if i >= len(line) {
					return nil, errors.New("an unclosed double quote")
				}
				if line[i] == '"' {
					i++
					break
				}
				switch {
				case line[i] == '\\' && i+1 < len(line) && strings.IndexByte(`"\$`, line[i+1]) >= 0:
					word.WriteByte(line[i+1])
					i += 2
				case line[i] == '$':
					n, err := expand(line[i:])
					if err != nil {
						return nil, err
					}
					i += n
				case line[i] == '`' || line[i] == '\\':
					return nil, fmt.Errorf("%q inside double quotes", line[i])
				default:
					word.WriteByte(line[i])
					i++
				}
			}
		case ch == '$':
			n, err := expand(line[i:])
			if err != nil {
				return nil, err
			}
			inWord, i = true, i+n
		case strings.IndexByte("\\`|&;<>(){}*?[]#~", ch) >= 0:
			return nil, fmt.Errorf("%q outside quotes, which a shell would interpret", ch)
		default:
			word.WriteByte(ch)
			inWord, i = true, i+1
		}
	}
	if inWord {
		words = append(words, word.String())
	}
	return words, nil
}

// curlRequest is the request curl makes for words (curl -s [-w format] [-o file] [-D file] [-X method]
// [-H header]… [-d body] url), with curl's defaults: GET, or POST with a
// form content type when -d is given.
func curlRequest(words []string) (*http.Request, error) {
	if len(words) == 0 || words[0] != "curl" {
		return nil, errors.New("not a curl command")
	}
	var method, body, target string
	var headers []string
	hasBody := false
	for i := 1; i < len(words); i++ {
		w := words[i]
		value := func() (string, error) {
			if i+1 >= len(words) {
				return "", fmt.Errorf("%s without a value", w)
			}
			i++
			return words[i], nil
		}
		var err error
		switch {
		case w == "-s":
		case w == "-w", w == "-o", w == "-D":
			_, err = value() // where and what curl prints of the answer
		case w == "-X":
			method, err = value()
		case w == "-H":
			var h string
			h, err = value()
			headers = append(headers, h)
		case w == "-d":
			body, err = value()
			hasBody = true
		case strings.HasPrefix(w, "-"):
			return nil, fmt.Errorf("the flag %s is not one the quick-start uses", w)
		case target != "":
			return nil, fmt.Errorf("two URLs, %s and %s", target, w)
		default:
			target = w
		}
		if err != nil {
			return nil, err
		}
	}
	if u, err := url.Parse(target); err != nil || u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("%q is not an http URL", target)
	}
	if method == "" {
		method = http.MethodGet
		if hasBody {
			method = http.MethodPost
		}
	}
	req, err := http.NewRequest(method, target, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	if hasBody {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for _, h := range headers {
		name, value, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("the header %q is not Name: value", h)
		}
		req.Header.Set(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	return req, nil
}

func TestTheShellSplitterRefusesWhatAShellWouldReadDifferently(t *testing.T) {
	vars := map[string]string{"TOKEN": "t0k"}
	good := map[string][]string{
		`curl -s 'http://h/token?user=a&as=b'`:           {"curl", "-s", "http://h/token?user=a&as=b"},
		`curl -H "Authorization: Bearer $TOKEN" -d '{}'`: {"curl", "-H", "Authorization: Bearer t0k", "-d", "{}"},
		`curl x"y"'z' $TOKEN`:                            {"curl", "xyz", "t0k"},
	}
	for line, want := range good {
		got, err := shellWords(line, vars)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: %q %v, want %q", line, got, err, want)
		}
	}
	for _, line := range []string{
		`curl 'unclosed`, `curl "unclosed`, `curl http://h/token?user=a&as=b`, `curl $UNSET`, `curl a; rm x`, `curl {"a": 1}`,
	} {
		if got, err := shellWords(line, vars); err == nil {
			t.Errorf("%s split into %q", line, got)
		}
	}
}
