package inspect

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/protoc-gen-garm/compile"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// View is what inspect shows of an artifact. Fields are declared in the
// order of their JSON keys, so the JSON is written with sorted keys.
type View struct {
	AnnotationSchemaVersion uint32     `json:"annotation_schema_version"`
	Digest                  string     `json:"digest"`
	Packages                []Package  `json:"packages"`
	Provenance              Provenance `json:"provenance"`
	// Signatures is set by the caller when an envelope is beside the
	// artifact (DescribeSignatures); Describe reads the artifact alone.
	Signatures *Signatures `json:"signatures,omitempty"`
	SizeBytes  int         `json:"size_bytes"`
	Taxonomy   Taxonomy    `json:"taxonomy"`
}

// Provenance is what the build recorded about itself.
type Provenance struct {
	// BuiltAt is RFC 3339 in UTC, and empty (absent from the JSON) unless
	// the build was asked to record a time.
	BuiltAt  string `json:"built_at,omitempty"`
	Compiler string `json:"compiler"`
	Producer string `json:"producer"`
	Source   string `json:"source"`
}

// Taxonomy is the catalogue's declared compartments and tool sets, sorted
// by name as the artifact stores them.
type Taxonomy struct {
	Attributes   []Attribute `json:"attributes"`
	Compartments []Decl      `json:"compartments"`
	ToolSets     []Decl      `json:"tool_sets"`
}

// Attribute is one declared principal attribute.
type Attribute struct {
	Description string `json:"description"`
	MaxItems    uint32 `json:"max_items,omitempty"`
	MaxLen      uint32 `json:"max_len,omitempty"`
	Name        string `json:"name"`
	Type        string `json:"type"`
}

// Rule is one instance rule of a tool: where it runs and what it says,
// never its expression's evaluation.
type Rule struct {
	AuditOnly   bool   `json:"audit_only"`
	Description string `json:"description"`
	Expression  string `json:"expression"`
	// Field is the answer field a filter keeps rows of.
	Field string `json:"field,omitempty"`
	ID    string `json:"id"`
	Phase string `json:"phase"`
}

// Limit is one effective limit of a tool.
type Limit struct {
	// Bound is the limit in one phrase ("5 per minute per tenant+subject").
	Bound string `json:"bound"`
	// Contract is, for a limit catalogue.yaml tightened, the contract's
	// bound it tightens.
	Contract string `json:"contract,omitempty"`
	// Cost is what one call counts against a rate; 0 for a concurrency
	// bound.
	Cost        uint32 `json:"cost,omitempty"`
	Count       uint32 `json:"count,omitempty"`
	Description string `json:"description"`
	ID          string `json:"id"`
	InFlight    uint32 `json:"in_flight,omitempty"`
	// Key is the parts the limit is counted per, in number order.
	Key []string `json:"key"`
	// Origin is CONTRACT, TIGHTENED or DEPLOYMENT.
	Origin string `json:"origin"`
	Soft   bool   `json:"soft"`
	Window string `json:"window,omitempty"`
}

// Decl is one declared compartment or tool set.
type Decl struct {
	Description string `json:"description"`
	Name        string `json:"name"`
}

// Package is one tool-bearing proto package.
type Package struct {
	// DescriptorHash is the package's wire-shape identity (design 4.4).
	DescriptorHash string `json:"descriptor_hash"`
	Name           string `json:"name"`
	// Tools in declaration order.
	Tools []Tool `json:"tools"`
}

// Tool is the policy that gates calls to one tool.
type Tool struct {
	Approval Approval `json:"approval"`
	Audit    Audit    `json:"audit"`
	// Compartments and Sets are sorted.
	Compartments []string `json:"compartments"`
	FQN          string   `json:"fqn"`
	// Limits are the tool's effective limits, by id: what garmd enforces,
	// whether the contract or catalogue.yaml set them.
	Limits []Limit `json:"limits"`
	// Method is the route, "/<package>.<Service>/<Method>".
	Method       string `json:"method"`
	MinClearance string `json:"min_clearance"`
	// Rules are the instance rules in evaluation order: require, reveal,
	// filter.
	Rules []Rule   `json:"rules"`
	Sets  []string `json:"sets"`
	Verb  string   `json:"verb"`
}

// Approval is a tool's approval mode and, under GRANT, what a grant must
// satisfy.
type Approval struct {
	// Grant is set only when Mode is GRANT: the other modes present no
	// grant, so terms declared beside them bind nothing.
	Grant *Grant `json:"grant,omitempty"`
	Mode  string `json:"mode"`
}

// Grant is what an approval grant for a tool must satisfy (design 7.9).
type Grant struct {
	// ApproverCompartments and MaterialFields are sorted.
	ApproverCompartments []string `json:"approver_compartments"`
	ApproverMinClearance string   `json:"approver_min_clearance"`
	// DistinctApprover is four eyes: the approver may not be the caller
	// or an actor of its chain.
	DistinctApprover   bool     `json:"distinct_approver"`
	MaterialFields     []string `json:"material_fields"`
	MaxGrantAgeSeconds uint32   `json:"max_grant_age_seconds"`
}

// Audit is a tool's audit level and terms.
type Audit struct {
	FailClosed bool   `json:"fail_closed"`
	Level      string `json:"level"`
	RetainDays uint32 `json:"retain_days"`
}

// Describe is the View of an artifact.
func Describe(a *artifact.Artifact) View {
	c := a.Catalogue
	v := View{
		AnnotationSchemaVersion: c.GetAnnotationSchemaVersion(),
		Digest:                  a.Digest,
		Packages:                []Package{},
		Provenance: Provenance{
			Compiler: c.GetProvenance().GetCompiler(),
			Producer: c.GetProvenance().GetProducer(),
			Source:   c.GetProvenance().GetSource(),
		},
		SizeBytes: a.Size,
		Taxonomy: Taxonomy{
			Attributes:   attributes(c.GetAttributes()),
			Compartments: declarations(c.GetCompartments()),
			ToolSets:     declarations(c.GetToolSets()),
		},
	}
	if at := c.GetProvenance().GetBuiltAt(); at != nil {
		v.Provenance.BuiltAt = at.AsTime().UTC().Format(time.RFC3339Nano)
	}
	limits := map[string][]Limit{}
	for _, p := range c.GetLimits() {
		limits[p.GetTool()] = append(limits[p.GetTool()], describeLimit(p))
	}
	for _, t := range a.Tools() {
		pkg := string(t.Desc.ParentFile().Package())
		if n := len(v.Packages); n == 0 || v.Packages[n-1].Name != pkg {
			v.Packages = append(v.Packages, Package{
				DescriptorHash: c.GetDescriptorHashes()[pkg],
				Name:           pkg,
				Tools:          []Tool{},
			})
		}
		last := &v.Packages[len(v.Packages)-1]
		tool := describeTool(t)
		if l := limits[t.FQN]; l != nil {
			tool.Limits = l
		}
		last.Tools = append(last.Tools, tool)
	}
	return v
}

func describeTool(t *compile.Tool) Tool {
	p := t.Policy
	tool := Tool{
		Approval: Approval{Mode: EnumName(p.GetApproval().GetMode())},
		Audit: Audit{
			FailClosed: p.GetAudit().GetFailClosed(),
			Level:      EnumName(p.GetAudit().GetLevel()),
			RetainDays: p.GetAudit().GetRetainDays(),
		},
		Compartments: sorted(p.GetCompartments()),
		FQN:          t.FQN,
		Limits:       []Limit{},
		Method:       t.Method,
		MinClearance: EnumName(p.GetMinClearance()),
		Rules:        rules(p.GetInstance()),
		Sets:         sorted(p.GetSets()),
		Verb:         EnumName(p.GetVerb()),
	}
	if a := p.GetApproval(); a.GetMode() == toolv1.ToolPolicy_Approval_MODE_GRANT {
		tool.Approval.Grant = &Grant{
			ApproverCompartments: sorted(a.GetApproverCompartments()),
			ApproverMinClearance: EnumName(a.GetApproverMinClearance()),
			DistinctApprover:     a.GetDistinctApprover(),
			MaterialFields:       sorted(a.GetMaterialFields()),
			MaxGrantAgeSeconds:   a.GetMaxGrantAgeSeconds(),
		}
	}
	return tool
}

func describeLimit(p *planv1.LimitPlan) Limit {
	l := p.GetLimit()
	out := Limit{
		Bound:       compile.DescribeLimit(l),
		Cost:        l.GetCost(),
		Count:       l.GetRate().GetCount(),
		Description: l.GetDescription(),
		ID:          l.GetId(),
		InFlight:    l.GetConcurrency().GetInFlight(),
		Key:         []string{},
		Origin:      strings.TrimPrefix(p.GetOrigin().String(), "LIMIT_ORIGIN_"),
		Soft:        l.GetSoft(),
	}
	if l.GetRate() != nil {
		out.Window = compile.WindowName(l.GetRate().GetWindow())
	}
	for _, k := range l.GetKey() {
		out.Key = append(out.Key, compile.KeyPartName(k))
	}
	if p.GetContract() != nil {
		out.Contract = compile.DescribeLimit(p.GetContract())
	}
	return out
}

func attributes(attrs []*toolv1.Attribute) []Attribute {
	out := make([]Attribute, 0, len(attrs))
	for _, a := range attrs {
		out = append(out, Attribute{Description: a.GetDescription(), MaxItems: a.GetMaxItems(), MaxLen: a.GetMaxLen(), Name: a.GetName(), Type: EnumName(a.GetType())})
	}
	return out
}

func rules(p *toolv1.InstancePolicy) []Rule {
	out := []Rule{}
	for _, r := range p.GetRequire() {
		out = append(out, Rule{AuditOnly: r.GetAuditOnly(), Description: r.GetDescription(), Expression: r.GetExpression(), ID: r.GetId(), Phase: "require"})
	}
	for _, r := range p.GetReveal() {
		out = append(out, Rule{AuditOnly: r.GetAuditOnly(), Description: r.GetDescription(), Expression: r.GetExpression(), ID: r.GetId(), Phase: "reveal"})
	}
	for _, f := range p.GetFilter() {
		out = append(out, Rule{AuditOnly: f.GetAuditOnly(), Description: f.GetDescription(), Expression: f.GetKeep(), Field: f.GetField(), ID: f.GetId(), Phase: "filter"})
	}
	return out
}

func declarations(decls []*toolv1.Decl) []Decl {
	out := make([]Decl, 0, len(decls))
	for _, d := range decls {
		out = append(out, Decl{Description: d.GetDescription(), Name: d.GetName()})
	}
	return out
}

// sorted is a sorted, de-duplicated copy, never nil, so the JSON says [].
func sorted(names []string) []string {
	out := slices.Compact(slices.Sorted(slices.Values(names)))
	if out == nil {
		out = []string{}
	}
	return out
}

// EnumName spells an enum value the way inspect and diff print it: its
// declared name without the type's prefix (CLEARANCE_CONFIDENTIAL →
// CONFIDENTIAL, MODE_GRANT → GRANT), or its number when this build does not
// know the value.
func EnumName(e protoreflect.Enum) string {
	value := e.Descriptor().Values().ByNumber(e.Number())
	if value == nil {
		return fmt.Sprint(int32(e.Number()))
	}
	name := string(value.Name())
	if _, short, ok := strings.Cut(name, "_"); ok {
		return short
	}
	return name
}

// WriteJSON writes the View as indented JSON with a trailing newline.
func WriteJSON(w io.Writer, v View) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	// Descriptions are prose for people; "&" should stay "&".
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
