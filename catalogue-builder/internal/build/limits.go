package build

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/garm-dev/garm/catalogue-builder/internal/manifest"
	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/internal/didyoumean"
	"github.com/garm-dev/garm/protoc-gen-garm/compile"
	"google.golang.org/protobuf/proto"
)

// keyParts and windows map catalogue.yaml's spellings to the vocabulary's.
var (
	keyParts = map[string]toolv1.Limit_KeyPart{
		"tenant":  toolv1.Limit_KEY_PART_TENANT,
		"subject": toolv1.Limit_KEY_PART_SUBJECT,
		"agent":   toolv1.Limit_KEY_PART_AGENT,
		"tool":    toolv1.Limit_KEY_PART_TOOL,
	}
	windows = map[string]toolv1.Limit_Window{
		"second": toolv1.Limit_WINDOW_SECOND,
		"minute": toolv1.Limit_WINDOW_MINUTE,
		"hour":   toolv1.Limit_WINDOW_HOUR,
		"day":    toolv1.Limit_WINDOW_DAY,
	}
)

// limitKey names one limit of one tool.
type limitKey struct{ tool, id string }

// resolveLimits is every tool's effective limits (decision 0123): each
// contract limit as declared (LIMIT_ORIGIN_CONTRACT), then each entry of
// the manifest's limits applied to the tools it names — tightening a
// contract limit of the same id (LIMIT_ORIGIN_TIGHTENED, the contract's
// limit kept beside it) or adding one (LIMIT_ORIGIN_DEPLOYMENT) — sorted
// by tool, then id. An entry that names nothing, that would loosen a
// contract's limit or change its kind, key or window, that adds a limit
// lint would refuse, or that sets a limit another entry sets too, is a
// problem at its position; L54 and L55 findings on a limit the manifest
// set are warnings naming the entry's line. The model has passed lint, so
// every contract limit is sound.
func resolveLimits(model *compile.Model, m *manifest.Manifest) ([]*planv1.LimitPlan, manifest.Problems, compile.Diagnostics) {
	r := &resolver{model: model, m: m, plans: map[limitKey]*planv1.LimitPlan{}, setBy: map[limitKey]manifest.Limit{}}
	for _, pkg := range model.Packages {
		for _, t := range pkg.Tools {
			r.tools = append(r.tools, t)
			for _, l := range t.Policy.GetLimits() {
				r.plans[limitKey{t.FQN, l.GetId()}] = &planv1.LimitPlan{
					Tool: t.FQN, Limit: compile.ResolveLimit(l), Origin: planv1.LimitOrigin_LIMIT_ORIGIN_CONTRACT,
				}
			}
		}
	}
	slices.SortFunc(r.tools, func(a, b *compile.Tool) int { return cmp.Compare(a.FQN, b.FQN) })
	if m != nil {
		for _, e := range m.Limits {
			r.apply(e)
		}
	}
	out := make([]*planv1.LimitPlan, 0, len(r.plans))
	for _, k := range slices.SortedFunc(maps.Keys(r.plans), func(a, b limitKey) int {
		return cmp.Or(cmp.Compare(a.tool, b.tool), cmp.Compare(a.id, b.id))
	}) {
		out = append(out, r.plans[k])
	}
	slices.SortStableFunc(r.problems, func(a, b manifest.Problem) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column), cmp.Compare(a.Message, b.Message))
	})
	return out, slices.Compact(r.problems), r.warnings
}

// resolver holds one resolution's state.
type resolver struct {
	model    *compile.Model
	m        *manifest.Manifest
	tools    []*compile.Tool // sorted by FQN
	plans    map[limitKey]*planv1.LimitPlan
	setBy    map[limitKey]manifest.Limit
	problems manifest.Problems
	warnings compile.Diagnostics
}

func (r *resolver) at(pos manifest.Position, format string, args ...any) {
	r.problems = append(r.problems, manifest.Problem{Path: r.m.Path, Line: pos.Line, Column: pos.Column, Message: fmt.Sprintf(format, args...)})
}

// apply applies one entry to every tool it names.
func (r *resolver) apply(e manifest.Limit) {
	entry := manifest.Position{Line: e.Line, Column: e.Column}
	if e.Rate != nil && e.Concurrency != nil {
		r.at(entry, "limit %q: a limit is a rate or a concurrency bound, not both", e.ID)
		return
	}
	for _, t := range r.targets(e) {
		r.applyTo(e, t)
	}
}

// targets are the tools an entry names, sorted by FQN; none, with a
// problem, when it names nothing.
func (r *resolver) targets(e manifest.Limit) []*compile.Tool {
	switch {
	case e.Tool != "":
		names := make([]string, 0, 2*len(r.tools))
		for _, t := range r.tools {
			if t.Name == e.Tool || t.FQN == e.Tool {
				return []*compile.Tool{t}
			}
			names = append(names, t.Name, t.FQN)
		}
		r.at(e.At["tool"], "limit %q: %q names no tool of the catalogue%s", e.ID, e.Tool, didyoumean.Hint(e.Tool, names))
		return nil
	case e.ToolSet != "":
		var declared []string
		for _, d := range r.model.ToolSets {
			declared = append(declared, d.Name)
		}
		if !slices.Contains(declared, e.ToolSet) {
			r.at(e.At["tool_set"], "limit %q: tool set %q is not declared%s", e.ID, e.ToolSet, didyoumean.Hint(e.ToolSet, declared))
			return nil
		}
		var out []*compile.Tool
		for _, t := range r.tools {
			if slices.Contains(t.Policy.GetSets(), e.ToolSet) {
				out = append(out, t)
			}
		}
		if len(out) == 0 {
			r.at(e.At["tool_set"], "limit %q: tool set %q holds no tool, so the limit would apply to nothing", e.ID, e.ToolSet)
		}
		return out
	}
	return r.tools
}

// applyTo applies one entry to one tool.
func (r *resolver) applyTo(e manifest.Limit, t *compile.Tool) {
	entry := manifest.Position{Line: e.Line, Column: e.Column}
	key := limitKey{t.FQN, e.ID}
	if prev, taken := r.setBy[key]; taken {
		r.at(entry, "limit %q of %s is also set by the entry on line %d: one entry per limit of a tool", e.ID, t.FQN, prev.Line)
		return
	}
	r.setBy[key] = e
	var contract *toolv1.Limit
	if p := r.plans[key]; p != nil {
		contract = p.GetLimit()
	}
	candidate := overlay(contract, e)
	problems := compile.CheckLimit(candidate)
	for _, p := range problems {
		if contract == nil {
			// The entry alone is at fault, whichever tool it reaches.
			r.at(entry, "limit %q: %s", e.ID, p.Message)
		} else {
			r.at(entry, "limit %q of %s: %s", e.ID, t.FQN, p.Message)
		}
	}
	if len(problems) > 0 {
		return
	}
	effective := compile.ResolveLimit(candidate)
	plan := &planv1.LimitPlan{Tool: t.FQN, Limit: effective, Origin: planv1.LimitOrigin_LIMIT_ORIGIN_DEPLOYMENT}
	if contract != nil {
		switch order, terms := compile.CompareLimits(contract, effective); order {
		case compile.LimitLooser, compile.LimitMixed:
			r.at(entry, "limit %q of %s would loosen the contract's (%s): %s; catalogue.yaml may only tighten a contract's limit",
				e.ID, t.FQN, compile.DescribeLimit(contract), strings.Join(terms, ", "))
			return
		case compile.LimitUnlike:
			r.at(entry, "limit %q of %s changes the contract's %s: %s; catalogue.yaml tightens a contract's limit and never changes its kind, key or window, so give a new limit its own id",
				e.ID, t.FQN, compile.DescribeLimit(contract), strings.Join(terms, ", "))
			return
		}
		if proto.Equal(contract, effective) {
			return
		}
		plan.Origin, plan.Contract = planv1.LimitOrigin_LIMIT_ORIGIN_TIGHTENED, contract
	}
	r.plans[key] = plan
	for _, w := range compile.LimitWarnings(t.Policy, effective) {
		r.warnings = append(r.warnings, compile.Diagnostic{
			Severity: compile.Warning, Rule: w.Rule, Path: fmt.Sprintf("%s:%d", r.m.Path, e.Line),
			Message: fmt.Sprintf("limit %q of %s: %s", e.ID, t.FQN, w.Message),
		})
	}
}

// overlay is the limit an entry makes of a tool's contract limit (nil when
// the contract has none of that id): the contract's terms, each replaced
// by the entry's where the entry gives it.
func overlay(contract *toolv1.Limit, e manifest.Limit) *toolv1.Limit {
	l := &toolv1.Limit{Id: e.ID}
	if contract != nil {
		l = proto.CloneOf(contract)
	}
	if e.Description != nil {
		l.Description = *e.Description
	}
	if e.Key != nil {
		l.Key = nil
		for _, p := range e.Key {
			l.Key = append(l.Key, keyParts[p])
		}
	}
	if e.Rate != nil {
		rate := l.GetRate()
		if rate == nil {
			rate = &toolv1.Limit_Rate{}
		}
		if e.Rate.Count != nil {
			rate.Count = *e.Rate.Count
		}
		if e.Rate.Window != "" {
			rate.Window = windows[e.Rate.Window]
		}
		l.Kind = &toolv1.Limit_Rate_{Rate: rate}
	}
	if e.Concurrency != nil {
		c := l.GetConcurrency()
		if c == nil {
			c = &toolv1.Limit_Concurrency{}
		}
		if e.Concurrency.InFlight != nil {
			c.InFlight = *e.Concurrency.InFlight
		}
		if l.GetRate() != nil {
			// A rate's cost and softness do not carry over to a bound of
			// another kind: the comparison with the contract names the
			// change of kind instead.
			l.Cost, l.Soft = 0, false
		}
		l.Kind = &toolv1.Limit_Concurrency_{Concurrency: c}
	}
	if e.Cost != nil {
		l.Cost = *e.Cost
	}
	if e.Soft != nil {
		l.Soft = *e.Soft
	}
	return l
}
