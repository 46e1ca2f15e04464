package devplane

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"text/template"

	"github.com/garm-dev/garm/catalogue-builder/builder"
	"github.com/garm-dev/garm/catalogue-builder/natsperm"
	"github.com/garm-dev/garm/devkit/idp"
)

// ListToolsRoute is garmd's listing (design 7.6); it is not a tool.
const ListToolsRoute = "/garm.v1.ToolCatalogService/ListTools"

// genericQuickStartText is printed by `garm dev` for any catalogue. Every
// command is copy-pasteable into a POSIX shell and prints the status and
// the answer as pretty JSON: curl writes the status to stderr so that jq
// reads the answer alone.
var genericQuickStartText = template.Must(template.New("quickstart").Parse(`
garm dev is up on loopback: garmd serves the catalogue {{.Catalogue}} ({{.ToolCount}} tools),
with approval grants, the ledger stream, the audit sink and notify on.

  garmd     {{.URLs.Garmd}}   POST /<package>.<Service>/<Method>
  admin     {{.URLs.Admin}}   /healthz /readyz /metrics
  dev IdP   {{.URLs.IdP}}   /token?user=<persona> /personas, and sign-in for the inbox
  approvals {{.URLs.Approvals}}/   the inbox: approve or deny calls held for a grant
  ledger    {{.URLs.Dev}}   /ledger/<event id> (the row's outcome, code and detail), for garm call:
            it answers only with the secret in {{.URLs.DevSecretFile}}
  NATS      {{.URLs.NATS}}   secured: one nkey user per tool package; seeds in {{.URLs.NATSSeeds}}
{{range .Packages}}
Serve {{.Package}} from your own process (its bus identity is {{.User}}):
  go run . --nats {{$.URLs.NATS}} --nats-nkey {{.Seed}}
{{end}}
Personas: {{.Users}}{{if .Agents}}; agents: {{.Agents}}{{end}}.

{{if .Env}}# garm token and garm call look for the default addresses; in this shell, point them here:
export {{.Env}}
{{end -}}
# A token per persona, with garm (an agent acting for it with --agent) or curl:
{{range .Tokens}}garm token {{.}}
{{end -}}
TOKEN=$(curl -s '{{.URLs.IdP}}/token?user={{.First}}')
# What {{.First}} may call:
curl -s -w '%{stderr}HTTP %{http_code}\n' {{.URLs.Garmd}}{{.ListRoute}} -H "Authorization: Bearer $TOKEN" \
  -H 'Content-Type: application/json' -d '{}' | jq .
{{range .Calls}}
# {{.Tool}}{{if .Description}}: {{.Description}}{{end}}
garm call {{.Tool}} --as {{$.First}} '{{.Body}}'
{{- end}}

garm call prints the HTTP status, the event id, the answer and the ledger row: its outcome,
and for a refusal the code and the detail garmd recorded (never sent to the caller).
Edit a .proto and save: the catalogue is built again, and served if it lints.
`))

type genericQuickStart struct {
	URLs      URLs
	Catalogue string
	ToolCount int
	ListRoute string
	Users     string
	Agents    string
	First     string
	Tokens    []string // the arguments of garm token, one persona each
	Env       string   // GARM_URL, GARM_IDP and GARM_DEV, when not the defaults
	Packages  []packageLine
	Calls     []callLine
}

type packageLine struct{ Package, User, Seed string }

type callLine struct{ Tool, Description, Body string }

// GenericQuickStart is the quick-start of any catalogue: a token per
// persona, the listing, and one `garm call` per tool, with the request of
// the tool's first guidance example where it has one, else {}.
func GenericQuickStart(c *builder.Catalogue, personas *idp.Personas, urls URLs) (string, error) {
	q := genericQuickStart{URLs: urls, ListRoute: ListToolsRoute}
	q.Catalogue = c.Artifact.Digest[:min(len(c.Artifact.Digest), 19)]
	var users, agents []string
	for handle := range personas.Users {
		users = append(users, handle)
	}
	for handle := range personas.Agents {
		agents = append(agents, handle)
	}
	slices.Sort(users)
	slices.Sort(agents)
	q.Users, q.Agents = strings.Join(users, ", "), strings.Join(agents, ", ")
	if len(users) > 0 {
		q.First = users[0]
	}
	q.Tokens = users
	if urls.Garmd != "http://"+DefaultListen || urls.IdP != "http://"+DefaultIdPListen || urls.Dev != "http://"+DefaultDevListen {
		q.Env = "GARM_URL=" + urls.Garmd + " GARM_IDP=" + urls.IdP + " GARM_DEV=" + urls.Dev
	}
	for _, handle := range agents {
		for _, user := range personas.Agents[handle].MayActFor {
			q.Tokens = append(q.Tokens, user+" --agent "+handle)
		}
	}
	seen := map[string]bool{}
	for _, t := range c.Artifact.Tools() {
		q.ToolCount++
		pkg := string(t.Desc.ParentFile().Package())
		if !seen[pkg] {
			seen[pkg] = true
			user := natsperm.ToolUser(pkg)
			q.Packages = append(q.Packages, packageLine{Package: pkg, User: user, Seed: urls.NATSSeeds + "/" + user + ".nk"})
		}
		call := callLine{Tool: t.FQN, Body: "{}"}
		if examples := t.Policy.GetGuidance().GetExamples(); len(examples) > 0 {
			call.Description = examples[0].GetDescription()
			if body, ok := oneLine(examples[0].GetRequestJson()); ok {
				call.Body = body
			}
		}
		q.Calls = append(q.Calls, call)
	}
	var out bytes.Buffer
	if err := genericQuickStartText.Execute(&out, q); err != nil {
		return "", err
	}
	cluster, err := ClusterQuickStart(urls)
	return out.String() + cluster, err
}

// oneLine is a JSON text compacted onto one line, when it is JSON and can
// sit inside single quotes.
func oneLine(text string) (string, bool) {
	var b bytes.Buffer
	if json.Compact(&b, []byte(text)) != nil || bytes.ContainsRune(b.Bytes(), '\'') {
		return "", false
	}
	return b.String(), true
}
