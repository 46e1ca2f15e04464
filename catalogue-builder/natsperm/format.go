package natsperm

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// PermissionVariable is the configuration variable WriteConf defines for
// the named identity's permissions, e.g. GARM_GARMD or GARM_TOOL_CALC_V1.
func PermissionVariable(name string) string { return "GARM_" + strings.ToUpper(name) }

// EveryoneElseVariable is the variable WriteConf defines for everyone
// else's permissions: nothing.
const EveryoneElseVariable = "GARM_EVERYONE_ELSE"

// WriteConf writes s as nats-server configuration: one variable of
// permissions per identity, one subject per line, to be included at the
// top of the server's configuration and named in its authorization block.
// The block itself is the operator's: it holds credentials, and users garm
// does not know of (whoever creates the streams, the agents).
func WriteConf(w io.Writer, s *Set) error {
	p := &confPrinter{}
	p.line("# NATS permissions for garm, derived from the catalogue")
	p.line("#   %s", s.Catalogue)
	p.line("# by garm-catalogue nats-permissions. Regenerate this file whenever the")
	p.line("# catalogue changes: a new tool is a new line. Include it at the top of the")
	p.line("# server's configuration and give each user its variable:")
	p.line("#")
	p.line("#   include \"garm-permissions.conf\"")
	p.line("#   authorization {")
	p.line("#     default_permissions = $%s", EveryoneElseVariable)
	p.line("#     users = [")
	for _, id := range s.Identities {
		p.line("#       { user = %q, password = \"<bcrypt hash>\", permissions = $%s }", id.Name, PermissionVariable(id.Name))
	}
	p.line("#     ]")
	p.line("#   }")
	p.line("#")
	p.line("# (an nkey user takes the same variable: { nkey = \"U...\", permissions = ... }).")
	p.line("")
	p.line("# Everyone else, an agent included: nothing.")
	p.permissions(EveryoneElseVariable, s.EveryoneElse)
	for _, id := range s.Identities {
		p.line("")
		p.line("# %s", describe(id))
		if id.InboxPrefix != "" {
			p.line("# It connects with the inbox prefix %s.", id.InboxPrefix)
		}
		p.permissions(PermissionVariable(id.Name), id.Permissions)
	}
	_, err := io.WriteString(w, p.b.String())
	return err
}

// describe says in a line what an identity is for.
func describe(id Identity) string {
	switch id.Role {
	case RoleGarmd:
		return "garmd: calls every tool, writes its streams, spends grants with create-only writes."
	case RoleApprovals:
		return "The approvals service: reads approval requests, records decisions with create-only writes, writes its audit rows."
	case RoleTool:
		return fmt.Sprintf("The services of %s: take its calls in their queue groups, answer, nothing else.", id.Package)
	}
	return string(id.Role)
}

type confPrinter struct {
	b      strings.Builder
	indent int
}

func (p *confPrinter) line(format string, args ...any) {
	p.b.WriteString(strings.Repeat("  ", p.indent))
	fmt.Fprintf(&p.b, format, args...)
	p.b.WriteByte('\n')
}

func (p *confPrinter) permissions(key string, perms Permissions) {
	p.line("%s = {", key)
	p.indent++
	p.rules("publish", perms.Publish)
	p.rules("subscribe", perms.Subscribe)
	if perms.Responses {
		p.line("allow_responses = { max = %d }", ResponsesMax)
	}
	p.indent--
	p.line("}")
}

func (p *confPrinter) rules(key string, r Rules) {
	p.line("%s = {", key)
	p.indent++
	p.subjects("allow", r.Allow)
	p.subjects("deny", r.Deny)
	p.indent--
	p.line("}")
}

func (p *confPrinter) subjects(key string, subjects []string) {
	if len(subjects) == 0 {
		return
	}
	p.line("%s = [", key)
	p.indent++
	for _, s := range subjects {
		p.line("%q", s)
	}
	p.indent--
	p.line("]")
}

// jsonSet is the JSON form: each identity's permissions in the shape of a
// NATS user JWT's (pub, sub, resp), which nsc and auth callouts take.
type jsonSet struct {
	Catalogue    string         `json:"catalogue"`
	Users        []jsonIdentity `json:"users"`
	EveryoneElse jsonPerms      `json:"everyone_else"`
}

type jsonIdentity struct {
	Name        string    `json:"name"`
	Role        Role      `json:"role"`
	Package     string    `json:"package,omitempty"`
	InboxPrefix string    `json:"inbox_prefix,omitempty"`
	Permissions jsonPerms `json:"permissions"`
}

type jsonPerms struct {
	Pub  jsonRules `json:"pub"`
	Sub  jsonRules `json:"sub"`
	Resp *jsonResp `json:"resp,omitempty"`
}

type jsonRules struct {
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

// jsonResp is a JWT's response permission: replies to the requests
// received, ResponsesMax of them each, within the server's default time.
type jsonResp struct {
	Max int `json:"max"`
}

func toJSON(p Permissions) jsonPerms {
	out := jsonPerms{
		Pub: jsonRules{Allow: p.Publish.Allow, Deny: p.Publish.Deny},
		Sub: jsonRules{Allow: p.Subscribe.Allow, Deny: p.Subscribe.Deny},
	}
	if p.Responses {
		out.Resp = &jsonResp{Max: ResponsesMax}
	}
	return out
}

// WriteJSON writes s as indented JSON, one subject per line.
func WriteJSON(w io.Writer, s *Set) error {
	out := jsonSet{Catalogue: s.Catalogue, EveryoneElse: toJSON(s.EveryoneElse)}
	for _, id := range s.Identities {
		out.Users = append(out.Users, jsonIdentity{
			Name: id.Name, Role: id.Role, Package: id.Package, InboxPrefix: id.InboxPrefix,
			Permissions: toJSON(id.Permissions),
		})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // ">" is a subject wildcard, written as itself
	return enc.Encode(out)
}
