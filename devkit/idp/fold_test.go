package idp_test

import (
	"testing"

	"github.com/garm-dev/garm/devkit/idp"
)

// unionPersonas exercises the fold: roles that each add something, scoped and unscoped.
const unionPersonas = `
tenant: acme
roles:
  base:       {clearance: public, verbs: [read]}
  contact:    {clearance: internal, compartments: [pii-contact], verbs: [write]}
  identity:   {clearance: restricted, compartments: [pii-identity, pii-contact]}
  payer:      {verbs: [destructive], compartments: [payments]}
  reports:    {clearance: internal, verbs: [read], tool_sets: [reports]}
  dashboards: {clearance: confidential, verbs: [read], tool_sets: [dashboards, reports]}
users:
  everything: {subject: "user:everything", roles: [payer, identity, base, contact]}
  scoped:     {subject: "user:scoped", roles: [reports, dashboards]}
  mixed:      {subject: "user:mixed", roles: [reports, base]}
  batch:      {subject: "service:batch", roles: [base], kind: service}
`

func TestRolesFoldIntoOneGarmClaimByUnion(t *testing.T) {
	p, err := idp.ParsePersonas([]byte(unionPersonas))
	if err != nil {
		t.Fatal(err)
	}
	i, err := idp.New(p, idp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		user string
		want map[string]any
	}{
		{"everything", map[string]any{
			"clearance":    "CLEARANCE_RESTRICTED",
			"compartments": []string{"payments", "pii-contact", "pii-identity"},
			"verbs":        []string{"VERB_READ", "VERB_WRITE", "VERB_DESTRUCTIVE"},
			"kind":         "PRINCIPAL_KIND_USER",
		}},
		{"scoped", map[string]any{
			"clearance":    "CLEARANCE_CONFIDENTIAL",
			"compartments": []string{},
			"verbs":        []string{"VERB_READ"},
			"tool_sets":    []string{"dashboards", "reports"},
			"kind":         "PRINCIPAL_KIND_USER",
		}},
		{"mixed", map[string]any{
			"clearance":    "CLEARANCE_INTERNAL",
			"compartments": []string{},
			"verbs":        []string{"VERB_READ"},
			"kind":         "PRINCIPAL_KIND_USER",
		}},
		{"batch", map[string]any{
			"clearance":    "CLEARANCE_PUBLIC",
			"compartments": []string{},
			"verbs":        []string{"VERB_READ"},
			"kind":         "PRINCIPAL_KIND_SERVICE",
		}},
	}
	for _, c := range cases {
		token, err := i.Token(c.user, "")
		if err != nil {
			t.Fatalf("%s: %v", c.user, err)
		}
		claims, _ := claimsOf(t, token)
		if g, w := asJSON(t, claims["garm"]), asJSON(t, c.want); g != w {
			t.Errorf("%s's garm claim:\n%s\nwant:\n%s", c.user, g, w)
		}
	}
}
