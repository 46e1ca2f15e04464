package approvals_test

import (
	"testing"

	"github.com/garm-dev/garm/approvals"
	"github.com/garm-dev/garm/approvals/pending"
)

func TestWhoMayDecideARequest(t *testing.T) {
	req := pending.Request{
		Tenant: "acme-bank", Subject: treasurer, Act: []string{payerAgent},
		ApproverMinClearance: "CLEARANCE_RESTRICTED", ApproverCompartments: []string{"financial"}, DistinctApprover: true,
	}
	cleared := approvals.Approver{Subject: "user:adam", Tenant: "acme-bank", Clearance: "CLEARANCE_RESTRICTED", Compartments: []string{"financial", "pii"}}
	with := func(edit func(*approvals.Approver)) approvals.Approver {
		a := cleared
		edit(&a)
		return a
	}
	reqWith := func(edit func(*pending.Request)) pending.Request {
		r := req
		edit(&r)
		return r
	}
	for _, tc := range []struct {
		name string
		a    approvals.Approver
		r    pending.Request
		want bool
	}{
		{"a cleared approver with the compartment", cleared, req, true},
		{"a bare clearance spelling", with(func(a *approvals.Approver) { a.Clearance = "restricted" }), req, true},
		{"a clearance below the minimum", with(func(a *approvals.Approver) { a.Clearance = "CLEARANCE_CONFIDENTIAL" }), req, false},
		{"an unknown clearance", with(func(a *approvals.Approver) { a.Clearance = "TOP" }), req, false},
		{"no clearance", with(func(a *approvals.Approver) { a.Clearance = "" }), req, false},
		{"a missing compartment", with(func(a *approvals.Approver) { a.Compartments = []string{"pii"} }), req, false},
		{"another tenant", with(func(a *approvals.Approver) { a.Tenant = "other-bank" }), req, false},
		{"the caller itself", with(func(a *approvals.Approver) { a.Subject = treasurer }), req, false},
		{"the agent acting for the caller", with(func(a *approvals.Approver) { a.Subject = payerAgent }), req, false},
		{"the caller when four eyes is off", with(func(a *approvals.Approver) { a.Subject = treasurer }), reqWith(func(r *pending.Request) { r.DistinctApprover = false }), true},
		{"a tool whose minimum is unspecified", cleared, reqWith(func(r *pending.Request) { r.ApproverMinClearance = "" }), false},
		{"a higher clearance", with(func(a *approvals.Approver) { a.Clearance = "CLEARANCE_RESTRICTED" }), reqWith(func(r *pending.Request) { r.ApproverMinClearance = "INTERNAL" }), true},
		{"no subject", with(func(a *approvals.Approver) { a.Subject = "" }), req, false},
	} {
		if got := approvals.MayDecide(tc.a, tc.r); got != tc.want {
			t.Errorf("%s: MayDecide = %v, want %v", tc.name, got, tc.want)
		}
	}
}
