package idp_test

import (
	"fmt"
	"maps"
	"slices"

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
