package minter

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/chain/authn"
	"github.com/garm-dev/garm/daemon/internal/chain/grant"
	"github.com/garm-dev/garm/daemon/internal/replay/memory"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	celrule "github.com/garm-dev/garm/protoc-gen-garm/compile/instance"
	"github.com/garm-dev/garm/runtime/wire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

// verifiers are garmd's own token and grant verifiers (chain steps 1 and
// 5), configured as a suite's trust says; nil when the suite has no such
// trust.
type verifiers struct {
	tokens *authn.Authenticator
	grants *grant.Verifier
	tax    taxonomy
}

func newVerifiers(s *Suite, vars map[string]string, client *http.Client) (*verifiers, error) {
	v := &verifiers{}
	if t := s.Token; t != nil {
		a, err := authn.New(authn.Config{
			Issuers:  []authn.Issuer{{Name: expand(t.Issuer, vars), JWKSURL: expand(t.JWKS, vars)}},
			Audience: t.Audience, CacheSize: -1, Client: client,
		})
		if err != nil {
			return nil, fmt.Errorf("minter: the token trust: %w", err)
		}
		v.tokens, v.tax = a, newTaxonomy(t.Compartments)
	}
	if t := s.Grant; t != nil {
		g, err := grant.New(grant.Config{
			Issuer: expand(t.Issuer, vars), JWKSURL: expand(t.JWKS, vars), Audience: t.Audience,
			Spender: memory.New(), Client: client,
		})
		if err != nil {
			return nil, fmt.Errorf("minter: the grant trust: %w", err)
		}
		v.grants = g
	}
	return v, nil
}

// expand replaces each "{name}" in s with its value in vars.
func expand(s string, vars map[string]string) string {
	for name, value := range vars {
		s = strings.ReplaceAll(s, "{"+name+"}", value)
	}
	return s
}

// token verifies token as garmd's step 1 does and compares the principal
// with want: nil when it verified and holds every stated claim.
func (v *verifiers) token(ctx context.Context, token string, want *Claims) error {
	p, err := v.tokens.Authenticate(ctx, "Bearer "+token, v.tax)
	if err != nil {
		return fmt.Errorf("garmd refuses the token: %v", err)
	}
	var diffs []string
	differ := func(claim string, got, want any) {
		diffs = append(diffs, fmt.Sprintf("%s is %v, want %v", claim, got, want))
	}
	if p.Subject != want.Subject {
		differ("sub", p.Subject, want.Subject)
	}
	if want.Kind != "" && p.Kind.String() != want.Kind {
		differ("kind", p.Kind, want.Kind)
	}
	if want.Tenant != nil && p.Tenant != *want.Tenant {
		differ("tenant", p.Tenant, *want.Tenant)
	}
	if want.Clearance != "" && p.Clearance.String() != want.Clearance {
		differ("clearance", p.Clearance, want.Clearance)
	}
	if want.Compartments != nil && !slices.Equal(sorted(p.CompartmentNames), sorted(want.Compartments)) {
		differ("compartments", p.CompartmentNames, want.Compartments)
	}
	if want.Verbs != nil {
		var got []string
		for _, verb := range p.Verbs.List() {
			got = append(got, verb.String())
		}
		if !slices.Equal(sorted(got), sorted(want.Verbs)) {
			differ("verbs", got, want.Verbs)
		}
	}
	if want.Scoped != nil && p.Scoped != *want.Scoped {
		differ("scoped", p.Scoped, *want.Scoped)
	}
	if want.ToolSets != nil {
		got := slices.Sorted(maps.Keys(p.ToolSets))
		if !p.Scoped || !slices.Equal(got, sorted(want.ToolSets)) {
			differ("tool_sets", got, want.ToolSets)
		}
	}
	if want.Act != nil {
		var got []string
		for _, a := range p.Act {
			got = append(got, a.Subject)
		}
		if !slices.Equal(got, want.Act) {
			differ("act", got, want.Act)
		}
	}
	if want.Exec != nil && p.ExecutionSubject != *want.Exec {
		differ("exec", p.ExecutionSubject, *want.Exec)
	}
	if len(diffs) > 0 {
		return fmt.Errorf("garmd accepts the token but reads it differently: %s", strings.Join(diffs, "; "))
	}
	return nil
}

// grant verifies g as garmd's step 5 checks a grant presented for the call
// f describes; it spends nothing.
func (v *verifiers) grant(ctx context.Context, g string, f *GrantFor) error {
	t, req, err := f.tool()
	if err != nil {
		return err
	}
	p := &call.Principal{Subject: f.Subject, Tenant: f.Tenant}
	for _, a := range f.Act {
		p.Act = append(p.Act, call.Actor{Subject: a})
	}
	if _, err := v.grants.Check(ctx, g, p, t, req); err != nil {
		return fmt.Errorf("garmd refuses the grant: %v", err)
	}
	return nil
}

// tool is the MODE_GRANT tool f names and a request holding f's material:
// a message of one string field per material field, so the verifier
// recomputes the digest from a request exactly as garmd does.
func (f *GrantFor) tool() (*call.Tool, protoreflect.Message, error) {
	clearance, ok := toolv1.Clearance_value[f.Policy.ApproverMinClearance]
	if f.Policy.ApproverMinClearance != "" && !ok {
		return nil, nil, fmt.Errorf("the case's approver_min_clearance %q is not a clearance", f.Policy.ApproverMinClearance)
	}
	fields := slices.Sorted(maps.Keys(f.Material))
	t := &call.Tool{FQN: f.Tool, Policy: &toolv1.ToolPolicy{Approval: &toolv1.ToolPolicy_Approval{
		Mode:                 toolv1.ToolPolicy_Approval_MODE_GRANT,
		MaxGrantAgeSeconds:   f.Policy.MaxGrantAgeSeconds,
		ApproverMinClearance: toolv1.Clearance(clearance),
		ApproverCompartments: f.Policy.ApproverCompartments,
		DistinctApprover:     f.Policy.DistinctApprover,
		MaterialFields:       fields,
	}}}
	msg := &descriptorpb.DescriptorProto{Name: proto.String("Request")}
	for i, name := range fields {
		msg.Field = append(msg.Field, &descriptorpb.FieldDescriptorProto{
			Name: proto.String(name), Number: proto.Int32(int32(i + 1)), JsonName: proto.String(name),
			Type: descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(), Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(),
		})
	}
	file, err := protodesc.NewFile(&descriptorpb.FileDescriptorProto{
		Name: proto.String("garm_conformance_minter_request.proto"), Package: proto.String("garm.conformance.minter"),
		Syntax: proto.String("proto3"), MessageType: []*descriptorpb.DescriptorProto{msg},
	}, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("the case's material fields make no request: %v", err)
	}
	md := file.Messages().Get(0)
	req := dynamicpb.NewMessage(md)
	for _, name := range fields {
		if f.Material[name] == wire.Unset {
			continue // the approver approved the field's absence
		}
		req.Set(md.Fields().ByName(protoreflect.Name(name)), protoreflect.ValueOfString(f.Material[name]))
	}
	return t, req, nil
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// taxonomy numbers a catalogue's compartments in sorted order, as a
// generation numbers them (authn.Taxonomy).
type taxonomy []string

func newTaxonomy(names []string) taxonomy { return taxonomy(sorted(names)) }

func (tx taxonomy) CompartmentSet(names []string) (set call.Compartments, kept, dropped []string) {
	for _, n := range names {
		if i, ok := slices.BinarySearch(tx, n); ok {
			set |= 1 << i
			kept = append(kept, n)
		} else {
			dropped = append(dropped, n)
		}
	}
	return set, kept, dropped
}

// DeclaredAttribute declares nothing: a suite's claims name no principal
// attributes, so a token's garm.attrs is read and ignored as undeclared.
func (taxonomy) DeclaredAttribute(string) *toolv1.Attribute { return nil }

// PrincipalView is nil: the kit runs no instance rules.
func (taxonomy) PrincipalView(*call.Principal) *celrule.View { return nil }
