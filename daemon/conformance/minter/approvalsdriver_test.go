//go:build conformance

package minter_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"

	"github.com/garm-dev/garm/approvals/approvalstest"
	"github.com/garm-dev/garm/approvals/pending"
	"github.com/garm-dev/garm/daemon/conformance/minter"
)

// approvalsDriver drives the approvals service as grant minter
// (minter.ShapeApprovals) as garmd and an approver do: it records the
// case's request in the pending bucket as garmd records a call refused
// with grant_required, signs the case's approver ("mint": {"approver":
// persona}) in through the service's identity provider, approves on the
// request's page with its CSRF token, and reads the grant from the
// decision the service stored. It lives beside the test entry point
// because it signs in through approvalstest, which the kit's library may
// not import (decision 0107).
type approvalsDriver struct {
	base  string
	store *pending.Store
}

var _ minter.Driver = (*approvalsDriver)(nil)

func (d *approvalsDriver) MintToken(context.Context, *minter.Case) (string, error) {
	return "", errors.New("the approvals service mints no tokens")
}

func (d *approvalsDriver) MintGrant(ctx context.Context, c *minter.Case) (string, error) {
	approver, _ := c.Mint["approver"].(string)
	if approver == "" || c.For == nil {
		return "", errors.New("an approvals case needs mint.approver and for")
	}
	event := make([]byte, 8)
	_, _ = rand.Read(event)
	material := c.For.Material
	if material == nil {
		material = map[string]string{}
	}
	compartments := c.For.Policy.ApproverCompartments
	if compartments == nil {
		compartments = []string{}
	}
	act := c.For.Act
	if act == nil {
		act = []string{}
	}
	r, err := d.store.Ask(ctx, pending.Request{
		Tool: c.For.Tool, ToolTitle: "Conformance: " + c.For.Tool, ToolDescription: c.Name,
		ApproverMinClearance: c.For.Policy.ApproverMinClearance, ApproverCompartments: compartments,
		DistinctApprover: c.For.Policy.DistinctApprover, MaxGrantAgeSeconds: c.For.Policy.MaxGrantAgeSeconds,
		Subject: c.For.Subject, Act: act, Tenant: c.For.Tenant, Material: material,
		EventID: "conformance-" + hex.EncodeToString(event),
	})
	if err != nil {
		return "", fmt.Errorf("the request cannot be recorded: %w", err)
	}
	a, err := approvalstest.SignIn(ctx, d.base, approver)
	if err != nil {
		return "", fmt.Errorf("the approver cannot sign in: %w", err)
	}
	status, err := a.Decide(ctx, r.ID, pending.Approved)
	switch {
	case err != nil:
		return "", fmt.Errorf("the approval cannot be posted: %w", err)
	case status >= 400 && status < 500:
		return "", &minter.Refused{Status: status, Body: "the service would not let the approver approve"}
	case status != http.StatusOK:
		return "", fmt.Errorf("the approval answered %d", status)
	}
	_, decision, err := d.store.Lookup(ctx, r.ID)
	if err != nil || decision == nil || decision.Verdict != pending.Approved {
		return "", fmt.Errorf("the approval stored no approved decision (%v)", err)
	}
	return decision.Grant, nil
}
