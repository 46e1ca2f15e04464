package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"text/template"

	"github.com/garm-dev/garm/catalogue-builder/builder"
	"github.com/garm-dev/garm/devkit/devplane"
	"github.com/garm-dev/garm/devkit/idp"
	"github.com/garm-dev/garm/protoc-gen-garm/compile"
)

// quickStartText is what the dev stack prints once it is ready. Every
// command is copy-pasteable into a POSIX shell; each call to garmd prints its
// HTTP status (on stderr) and the answer through jq, the line after it says
// what it answers, and a test runs every command against a live
// stack and holds it to that line.
var quickStartText = template.Must(template.New("quickstart").Parse(`
garm dev stack is up: garmd serves the example bank and the calculator, with approval grants,
the ledger stream, the audit sink and notify on. Everything listens on loopback.

  garmd     {{.URLs.Garmd}}   POST /<package>.<Service>/<Method>
  admin     {{.URLs.Admin}}   /healthz /readyz /metrics
  dev IdP   {{.URLs.IdP}}   /token?user=<persona> /personas, and sign-in for the inbox
  approvals {{.URLs.Approvals}}/   the inbox: sign in as a persona, approve or deny held calls
  NATS      {{.URLs.NATS}}   GARM_LEDGER GARM_AUDIT GARM_NOTIFY GARM_GRANTS_SPENT GARM_APPROVALS
            secured: an nkey user each for garmd, every tool package, the approvals service and the agent (no rights),
            with permissions derived from the catalogue; seeds in {{.URLs.NATSSeeds}}

Personas: {{.Users}}, and the agent {{.Agent}}, which acts for {{.Support}}
(/token?user={{.Support}}&as={{.Agent}}) and sees no more than {{.Support}} does; the agents
{{.Concierge}} acting for {{.Customer}} and {{.Payer}} acting for {{.Treasurer}}.

# A token for {{.Support}}, and the tools {{.Support}} may call:
TOKEN=$(curl -s '{{.URLs.IdP}}/token?user={{.Support}}')
curl -s -w '%{stderr}HTTP %{http_code}\n' {{.URLs.Garmd}}{{.ListRoute}} -H "Authorization: Bearer $TOKEN" \
  -H 'Content-Type: application/json' -d '{}' | jq .
#   -> 200

# {{.CustomerTool}} as {{.Support}}: the email cut to its domain, no national id.
curl -s -w '%{stderr}HTTP %{http_code}\n' {{.URLs.Garmd}}{{.CustomerRoute}} -H "Authorization: Bearer $TOKEN" \
  -H 'Content-Type: application/json' -d '{{.CustomerBody}}' | jq .
#   -> 200
# The same as {{.Analyst}}: the whole record.
ANALYST=$(curl -s '{{.URLs.IdP}}/token?user={{.Analyst}}')
curl -s -w '%{stderr}HTTP %{http_code}\n' {{.URLs.Garmd}}{{.CustomerRoute}} -H "Authorization: Bearer $ANALYST" \
  -H 'Content-Type: application/json' -d '{{.CustomerBody}}' | jq .
#   -> 200
# {{.Outsider}} holds no compartment: the listing shows only the calculator's public tools,
OUTSIDER=$(curl -s '{{.URLs.IdP}}/token?user={{.Outsider}}')
curl -s -w '%{stderr}HTTP %{http_code}\n' {{.URLs.Garmd}}{{.ListRoute}} -H "Authorization: Bearer $OUTSIDER" \
  -H 'Content-Type: application/json' -d '{}' | jq .
#   -> 200
# and {{.CustomerTool}}, which {{.Outsider}} may not see, answers as a route that does not exist.
curl -s -w '%{stderr}HTTP %{http_code}\n' {{.URLs.Garmd}}{{.CustomerRoute}} -H "Authorization: Bearer $OUTSIDER" \
  -H 'Content-Type: application/json' -d '{{.CustomerBody}}' | jq .
#   -> 404 not_found

# The agent {{.Agent}} acting for {{.Support}}: a token naming both, and no more than {{.Support}} sees.
AGENT=$(curl -s '{{.URLs.IdP}}/token?user={{.Support}}&as={{.Agent}}')
curl -s -w '%{stderr}HTTP %{http_code}\n' {{.URLs.Garmd}}{{.CustomerRoute}} -H "Authorization: Bearer $AGENT" \
  -H 'Content-Type: application/json' -d '{{.CustomerBody}}' | jq .
#   -> 200

# {{.PaymentTool}} needs a human's approval of exactly this payment, by somebody other than
# the caller (four eyes). Without one, garmd records a request for it in the approvals inbox and
# answers grant_required with approval {id, url}, the request's page:
TREASURER=$(curl -s '{{.URLs.IdP}}/token?user={{.Treasurer}}')
curl -s -w '%{stderr}HTTP %{http_code}\n' {{.URLs.Garmd}}{{.PaymentRoute}} -H "Authorization: Bearer $TREASURER" \
  -H 'Content-Type: application/json' -d '{{.PaymentBody}}' | jq .
#   -> 403 grant_required
# Asking again for the same payment names the same request; keep its id:
APPROVAL=$(curl -s {{.URLs.Garmd}}{{.PaymentRoute}} -H "Authorization: Bearer $TREASURER" \
  -H 'Content-Type: application/json' -d '{{.PaymentBody}}' | jq -r .approval.id)
# Now approve it in a browser: open the inbox, {{.URLs.Approvals}}/ , and sign in as {{.Approver}}.
# The payment's page shows the paying account, the amount, the currency and the IBAN; press Approve.
# ({{.Treasurer}} signed in sees an empty inbox: nobody approves their own payment.)
# The approval names the account that pays: the same payment from {{.OtherAccount}} is refused.
curl -s -w '%{stderr}HTTP %{http_code}\n' {{.URLs.Garmd}}{{.PaymentRoute}} -H "Authorization: Bearer $TREASURER" -H "Garm-Approval: $APPROVAL" \
  -H 'Content-Type: application/json' -d '{{.OtherAccountPaymentBody}}' | jq .
#   -> 403 permission_denied
# With the approval, the payment is made:
curl -s -w '%{stderr}HTTP %{http_code}\n' {{.URLs.Garmd}}{{.PaymentRoute}} -H "Authorization: Bearer $TREASURER" -H "Garm-Approval: $APPROVAL" \
  -H 'Content-Type: application/json' -d '{{.PaymentBody}}' | jq .
#   -> 200
# Once: sent again, the spent grant is refused.
curl -s -w '%{stderr}HTTP %{http_code}\n' {{.URLs.Garmd}}{{.PaymentRoute}} -H "Authorization: Bearer $TREASURER" -H "Garm-Approval: $APPROVAL" \
  -H 'Content-Type: application/json' -d '{{.PaymentBody}}' | jq .
#   -> 403 permission_denied
# A human on the loop: cards.v1.freeze_card asks nobody first (MODE_NOTIFY), and every freeze
# is listed afterwards at {{.URLs.Approvals}}/feed ("Notified actions"), for someone cleared for
# what the call was decided with: sign in as {{.Support}} to see the freezes of the last day.

# Which records: the contract's instance rules, checked by garmd. {{.Customer}} is customer {{.SelfCustomer}},
# whose token names him and his two accounts; the agent {{.Concierge}} acting for him is trusted with one.
CONCIERGE=$(curl -s '{{.URLs.IdP}}/token?user={{.Customer}}&as={{.Concierge}}')
# {{.BalanceTool}}: only {{.ConciergeAccount}}; the other account is filtered out, and nothing says so.
curl -s -w '%{stderr}HTTP %{http_code}\n' {{.URLs.Garmd}}{{.BalanceRoute}} -H "Authorization: Bearer $CONCIERGE" \
  -H 'Content-Type: application/json' -d '{{.OwnBalanceBody}}' | jq .
#   -> 200
# Another customer is refused before the bank is asked, naming the rule: own_customer.
curl -s -w '%{stderr}HTTP %{http_code}\n' {{.URLs.Garmd}}{{.BalanceRoute}} -H "Authorization: Bearer $CONCIERGE" \
  -H 'Content-Type: application/json' -d '{{.CustomerBody}}' | jq .
#   -> 403 permission_denied
# The payment made above ({{.TourPayment}} on a fresh stack) is from another customer's account:
curl -s -w '%{stderr}HTTP %{http_code}\n' {{.URLs.Garmd}}{{.PaymentStatusRoute}} -H "Authorization: Bearer $CONCIERGE" \
  -H 'Content-Type: application/json' -d '{{.TourPaymentBody}}' | jq .
#   -> 404 tool_refused
# it answers exactly as a payment that does not exist, so an id cannot be probed.
curl -s -w '%{stderr}HTTP %{http_code}\n' {{.URLs.Garmd}}{{.PaymentStatusRoute}} -H "Authorization: Bearer $CONCIERGE" \
  -H 'Content-Type: application/json' -d '{{.MissingPaymentBody}}' | jq .
#   -> 404 tool_refused
# An agent pays at most 10,000.00 in one call: {{.Payer}} acting for {{.Treasurer}} asking for more is
# refused by the rule agent_cap before any approval is asked (no request waits in the inbox).
PAYER=$(curl -s '{{.URLs.IdP}}/token?user={{.Treasurer}}&as={{.Payer}}')
curl -s -w '%{stderr}HTTP %{http_code}\n' {{.URLs.Garmd}}{{.PaymentRoute}} -H "Authorization: Bearer $PAYER" \
  -H 'Content-Type: application/json' -d '{{.OverCapPaymentBody}}' | jq .
#   -> 403 permission_denied

# Limits: an agent in a loop meets its own limit long before a person meets theirs. {{.CardsTool}}
# lets a person list cards {{.PersonLimitCount}} times a minute ({{.PersonLimit}}), and an agent acting for one
# {{.AgentLimitCount}} ({{.AgentLimit}}); both are in the contract, and the listing shows them to the caller they
# apply to. The agent {{.Concierge}}, acting for {{.Customer}}, lists his cards {{.AgentLimitCount}} times (run again within the
# minute, each answers 429):
for i in {{.AgentLimitLoop}}; do curl -s -o /dev/null -w '%{http_code}\n' {{.URLs.Garmd}}{{.CardsRoute}} -H "Authorization: Bearer $CONCIERGE" -H 'Content-Type: application/json' -d '{{.OwnCardsBody}}'; done
#   -> 200
# Once more within the minute: refused before the bank is asked, 429 rate_limited naming {{.AgentLimit}},
# with Retry-After and the RateLimit-* fields (-D /dev/stderr prints the answer's header on stderr):
curl -s -D /dev/stderr {{.URLs.Garmd}}{{.CardsRoute}} -H "Authorization: Bearer $CONCIERGE" \
  -H 'Content-Type: application/json' -d '{{.OwnCardsBody}}' | jq .
#   -> 429 rate_limited
# {{.Customer}} himself is still served: a person's limit is his own.
CUSTOMER=$(curl -s '{{.URLs.IdP}}/token?user={{.Customer}}')
curl -s -w '%{stderr}HTTP %{http_code}\n' {{.URLs.Garmd}}{{.CardsRoute}} -H "Authorization: Bearer $CUSTOMER" \
  -H 'Content-Type: application/json' -d '{{.OwnCardsBody}}' | jq .
#   -> 200
# garm call (make install) prints the same refusal with Retry-After and RateLimit-* under its status,
# and the ledger row naming the limit:
#   garm call {{.CardsTool}} --as {{.Customer}} --agent {{.Concierge}} '{{.OwnCardsBody}}'
# Over MCP, the same tools/call is an isError result carrying the same body.

Every call to garmd above but the listings writes one ledger row to GARM_LEDGER; run with
--ledger to watch them land. Ctrl-C stops everything.

# MCP: garmd speaks the Model Context Protocol at {{.URLs.MCP}} (Streamable HTTP).
# Each caller sees its own tools/list; every tools/call runs the same chain and writes
# the same ledger row (surface "mcp"). A bearer token is the way in: the OAuth discovery
# names the dev identity provider's issuer, which does not resolve on purpose, so a
# client's own OAuth sign-in cannot finish. A token for the agent acting for {{.Support}}:
MCP_TOKEN=$(curl -s '{{.URLs.IdP}}/token?user={{.Support}}&as={{.Agent}}')
curl -s -w '%{stderr}HTTP %{http_code}\n' {{.URLs.MCP}} -H "Authorization: Bearer $MCP_TOKEN" \
  -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
  -d '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' | jq .
#   -> 200
# Claude Code:
claude mcp add --transport http garm {{.URLs.MCP}} --header "Authorization: Bearer $MCP_TOKEN"
# mcp.json (Cursor, Claude Desktop and others; paste the token):
#   {"mcpServers": {"garm": {"type": "http", "url": "{{.URLs.MCP}}",
#     "headers": {"Authorization": "Bearer <MCP_TOKEN>"}}}}
# MCP Inspector, from the command line (needs Node.js >= 22.19; an older Node gets an Inspector without --header):
npx @modelcontextprotocol/inspector@2.12.0 --cli {{.URLs.MCP}} --transport http \
  --header "Authorization: Bearer $MCP_TOKEN" --method tools/list
# Tokens last an hour; fetch a new one with the MCP_TOKEN line above.
`))

// quickStart is what the text is rendered from: the stack's real URLs,
// routes and personas, and the demo data the example bank is seeded with.
type quickStart struct {
	URLs                                            URLs
	Users                                           string
	Support, Analyst, Outsider, Treasurer, Approver string
	Agent                                           string
	ListRoute, CustomerTool, CustomerRoute          string
	PaymentTool, PaymentRoute                       string
	CustomerBody, PaymentBody                       string
	// OtherAccountPaymentBody is the approved payment from OtherAccount.
	OtherAccountPaymentBody, OtherAccount string

	// The instance rules' steps.
	Customer, Concierge, Payer                  string
	SelfCustomer, ConciergeAccount, TourPayment string
	BalanceTool, BalanceRoute                   string
	PaymentStatusRoute                          string
	OwnBalanceBody, TourPaymentBody             string
	MissingPaymentBody, OverCapPaymentBody      string

	// The limit's step.
	CardsTool, CardsRoute, OwnCardsBody string
	AgentLimit, PersonLimit             string
	AgentLimitCount, PersonLimitCount   uint32
	// AgentLimitLoop is 1 … AgentLimitCount, for a shell's for loop.
	AgentLimitLoop string
}

// newQuickStart gathers what the text shows from the catalogue, the
// personas and the demo data, all but the URLs. It fails when the catalogue
// or the personas lack what the text uses.
func newQuickStart(c *builder.Catalogue, personas *idp.Personas, d demo) (quickStart, error) {
	tools := map[string]*compile.Tool{}
	for _, t := range c.Artifact.Tools() {
		tools[t.FQN] = t
	}
	for _, fqn := range []string{d.customerTool, d.paymentTool, d.balanceTool, d.paymentStatusTool, d.cardsTool} {
		if tools[fqn] == nil {
			return quickStart{}, fmt.Errorf("the catalogue lacks %s, which the quick-start calls", fqn)
		}
	}
	customer, payment := tools[d.customerTool], tools[d.paymentTool]
	var users []string
	for _, handle := range []string{d.support, d.analyst, d.outsider, d.treasurer, d.approver, d.customer} {
		if _, ok := personas.Users[handle]; !ok {
			return quickStart{}, fmt.Errorf("the personas lack the user %q, whom the quick-start names", handle)
		}
		users = append(users, handle)
	}
	for _, handle := range []string{d.agent, d.concierge, d.payer} {
		if _, ok := personas.Agents[handle]; !ok {
			return quickStart{}, fmt.Errorf("the personas lack the agent %q, whom the quick-start names", handle)
		}
	}
	fromOther := d.paymentRequest
	fromOther.FromAccountID = d.otherAccount
	q := quickStart{
		Users:   strings.Join(users, ", "),
		Support: d.support, Analyst: d.analyst, Outsider: d.outsider, Treasurer: d.treasurer, Approver: d.approver,
		Agent:     d.agent,
		ListRoute: listToolsRoute, CustomerTool: customer.FQN, CustomerRoute: customer.Method,
		PaymentTool: payment.FQN, PaymentRoute: payment.Method,
		OtherAccount: d.otherAccount,

		Customer: d.customer, Concierge: d.concierge, Payer: d.payer,
		SelfCustomer: d.selfCustomer, ConciergeAccount: d.conciergeAccount, TourPayment: d.tourPayment,
		BalanceTool: d.balanceTool, BalanceRoute: tools[d.balanceTool].Method,
		PaymentStatusRoute: tools[d.paymentStatusTool].Method,

		CardsTool: d.cardsTool, CardsRoute: tools[d.cardsTool].Method,
		AgentLimit: d.agentLimit, PersonLimit: d.personLimit,
	}
	for _, l := range []struct {
		id   string
		into *uint32
	}{{d.agentLimit, &q.AgentLimitCount}, {d.personLimit, &q.PersonLimitCount}} {
		n, ok := rateLimitCount(c, d.cardsTool, l.id)
		if !ok {
			return quickStart{}, fmt.Errorf("the catalogue has no rate limit %s on %s, which the quick-start meets", l.id, d.cardsTool)
		}
		*l.into = n
	}
	loop := make([]string, q.AgentLimitCount)
	for i := range loop {
		loop[i] = strconv.Itoa(i + 1)
	}
	q.AgentLimitLoop = strings.Join(loop, " ")
	for _, b := range []struct {
		into *string
		v    any
	}{
		{&q.CustomerBody, d.customerRequest},
		{&q.PaymentBody, d.paymentRequest},
		{&q.OtherAccountPaymentBody, fromOther},
		{&q.OwnBalanceBody, d.ownBalanceRequest},
		{&q.TourPaymentBody, paymentStatusRequest{PaymentID: d.tourPayment}},
		{&q.MissingPaymentBody, paymentStatusRequest{PaymentID: d.missingPayment}},
		{&q.OverCapPaymentBody, d.overCapPaymentRequest},
		{&q.OwnCardsBody, d.ownBalanceRequest},
	} {
		body, err := jsonBody(b.v)
		if err != nil {
			return quickStart{}, err
		}
		*b.into = body
	}
	return q, nil
}

// rateLimitCount is the count of the rate limit id of tool in the
// catalogue, as garmd enforces it.
func rateLimitCount(c *builder.Catalogue, tool, id string) (uint32, bool) {
	for _, p := range c.Artifact.Catalogue.GetLimits() {
		if p.GetTool() == tool && p.GetLimit().GetId() == id && p.GetLimit().GetRate() != nil {
			return p.GetLimit().GetRate().GetCount(), true
		}
	}
	return 0, false
}

// render is the text over the stack's URLs.
func (q quickStart) render(urls URLs) (string, error) {
	q.URLs = urls
	var out bytes.Buffer
	if err := quickStartText.Execute(&out, q); err != nil {
		return "", err
	}
	cluster, err := devplane.ClusterQuickStart(urls)
	return out.String() + cluster, err
}

// jsonBody is v as one line of JSON that can sit inside single quotes.
func jsonBody(v any) (string, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	if bytes.ContainsRune(data, '\'') {
		return "", fmt.Errorf("the body %s holds a single quote and cannot be shell-quoted", data)
	}
	return string(data), nil
}
