package idp_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/garm-dev/garm/devkit/idp"
)

func ExampleLoadPersonas() {
	p, err := idp.LoadPersonas("testdata/personas.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("tenant:", p.Tenant)
	for _, handle := range slices.Sorted(maps.Keys(p.Users)) {
		u := p.Users[handle]
		fmt.Printf("user %s: %s %v\n", handle, u.Subject, u.Roles)
	}
	for _, handle := range slices.Sorted(maps.Keys(p.Agents)) {
		a := p.Agents[handle]
		fmt.Printf("agent %s: %s may act for %v\n", handle, a.Subject, a.MayActFor)
	}
	// Output:
	// tenant: acme
	// user analyst: user:ana@acme.example [fraud-analysis]
	// user outsider: user:olly@contractor.example [contractor]
	// user reporter: user:rita@acme.example [reporting]
	// user support: user:sam@acme.example [support-desk]
	// agent assistant: agent:support-assistant may act for [support]
}

func ExampleIdP_Token() {
	p, err := idp.LoadPersonas("testdata/personas.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	i, err := idp.New(p, idp.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := i.Token("support", "assistant"); err == nil {
		fmt.Println("assistant may act for support")
	}
	if _, err := i.Token("analyst", "assistant"); err != nil {
		fmt.Println(err)
	}
	// Output:
	// assistant may act for support
	// agent may not act for user: "assistant" does not list "analyst" in may_act_for
}

// A grant binds what the approver saw: the tool, the caller it is for, and the digest of the
// material texts, computed with the same function garmd recomputes it from the request with.
func ExampleIdP_Grant() {
	p, err := idp.LoadPersonas("testdata/personas.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	i, err := idp.New(p, idp.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	grant, err := i.Grant(idp.GrantRequest{
		Approver: "analyst",
		Tool:     "payments.v1.initiate_payment",
		Subject:  "user:sam@acme.example",
		Task:     "TASK-42",
		Material: map[string]string{
			"amount_minor_units": "125000",
			"beneficiary_iban":   "GB29NWBK60161331926819",
			"currency_code":      "GBP",
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	// Read the payload only to show it; garmd verifies the signature against the IdP's key set.
	payload, err := base64.RawURLEncoding.DecodeString(strings.Split(grant, ".")[1])
	if err != nil {
		fmt.Println(err)
		return
	}
	var claims struct {
		Grant json.RawMessage `json:"garm_grant"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(claims.Grant))

	if _, err := i.Grant(idp.GrantRequest{Approver: "assistant", Tool: "payments.v1.initiate_payment", Subject: "user:sam@acme.example"}); err != nil {
		fmt.Println(err)
	}
	// Output:
	// {"tool":"payments.v1.initiate_payment","subject":"user:sam@acme.example","task":"TASK-42","material":"sha256:050767261c6a70af99c68e72344389981e728a40661ace42936a6d3d00ac9f71","approver":"user:ana@acme.example","approver_clearance":"CLEARANCE_RESTRICTED","approver_compartments":["pii-contact","pii-identity"]}
	// not a user: "assistant" is an agent, and an agent cannot approve
}
