package instance

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/garm-dev/garm/daemon/internal/call"
	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/protoc-gen-garm/compile"
	celrule "github.com/garm-dev/garm/protoc-gen-garm/compile/instance"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Rules are one catalogue generation's compiled instance rules, by tool.
// They are compiled at mount against that generation's own descriptors and
// never changed after: any number of calls may read them at once.
type Rules struct {
	env   *celrule.Env
	decl  celrule.Declarations
	tools []*Tool
	// carrying is how many tools have at least one rule; count is how
	// many rules they have.
	carrying, count int
	// programs are every program compiled or reused, by what proves one
	// interchangeable with another, for the next reload to reuse; mu
	// guards it and Reused while Compile runs.
	programs map[programKey]*celrule.Program
	mu       sync.Mutex
	// Reused counts the programs taken from the serving generation's.
	Reused int
}

// Tool is one tool's rules, in declaration order.
type Tool struct {
	Require []Rule
	Reveal  []Rule
	Filter  []Filter
}

// Rule is one compiled require or reveal rule.
type Rule struct {
	ID        string
	AuditOnly bool
	program   *celrule.Program
}

// Filter is one compiled row filter: path leads through singular message
// fields to the repeated message field it filters; clear are the fields
// cleared whenever it removed a row.
type Filter struct {
	Rule
	path  []protoreflect.FieldDescriptor
	clear [][]protoreflect.FieldDescriptor
}

// programKey is what makes a program compiled for one generation the
// program another would compile: the phase, the very descriptor objects it
// was checked against (a reload reuses a descriptor object only where the
// digests prove its file's bytes and imports unchanged, decision 0076), and
// the expression's text. The declarations are compared separately, once
// per generation.
type programKey struct {
	phase           planv1.RulePhase
	request, answer protoreflect.MessageDescriptor
	expression      string
}

// Compile compiles every rule of tools (tools[i].Index == i) against the
// tools' own descriptors and the declared attributes, or names every rule
// that does not compile, by tool and rule. serving, when given, is the
// serving generation's Rules: a program is taken from it, not compiled
// again, only when the declarations are equal and the key proves it the
// same (programKey).
//
// Tools are compiled beside each other on up to GOMAXPROCS goroutines: a
// tool's programs depend only on its own descriptors and rules and on the
// declarations, so the rules and the problems (in tool order) are the
// ones compiling tool after tool gives. Two tools whose rules share a key
// share one program, whichever compiled it first.
func Compile(tools []*call.Tool, attributes []*toolv1.Attribute, compartments int, serving *Rules) (*Rules, []string) {
	decl := celrule.Declarations{Attributes: attributes, Compartments: compartments}
	env, err := celrule.NewEnv(decl)
	if err != nil {
		return nil, []string{"instance rules: " + err.Error()}
	}
	r := &Rules{env: env, decl: decl, tools: make([]*Tool, len(tools)), programs: map[programKey]*celrule.Program{}}
	var reuse map[programKey]*celrule.Program
	if serving != nil && sameDeclarations(serving.decl, decl) {
		reuse = serving.programs
	}
	perTool := make([][]string, len(tools))
	inParallel(len(tools), func(i int) {
		t := tools[i]
		inst := t.Policy.GetInstance()
		if len(inst.GetRequire())+len(inst.GetReveal())+len(inst.GetFilter()) == 0 {
			return
		}
		c := compiler{r: r, reuse: reuse, tool: t}
		rt := &Tool{}
		for _, rule := range inst.GetRequire() {
			rt.Require = append(rt.Require, c.rule(planv1.RulePhase_RULE_PHASE_REQUIRE, rule, t.Output))
		}
		for _, rule := range inst.GetReveal() {
			if t.Verb != toolv1.Verb_VERB_READ {
				c.problem(rule.GetId(), "is a reveal rule on a %s tool; reveal is for VERB_READ tools only", t.Verb)
				continue
			}
			rt.Reveal = append(rt.Reveal, c.rule(planv1.RulePhase_RULE_PHASE_REVEAL, rule, t.Output))
		}
		for _, f := range inst.GetFilter() {
			rt.Filter = append(rt.Filter, c.filter(f))
		}
		if len(c.problems) > 0 {
			perTool[i] = c.problems
			return
		}
		r.tools[i] = rt
	})
	// Every rule is compiled: the serving generation keeps its programs,
	// not a parse of each rule text beside them.
	env.ForgetParses()
	var problems []string
	for i, rt := range r.tools {
		problems = append(problems, perTool[i]...)
		if rt != nil {
			r.carrying++
			r.count += len(rt.Require) + len(rt.Reveal) + len(rt.Filter)
		}
	}
	if len(problems) > 0 {
		return nil, problems
	}
	return r, nil
}

// inParallel calls f(0) … f(n-1) on up to GOMAXPROCS goroutines and
// returns when every call has.
func inParallel(n int, f func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				f(i)
			}
		})
	}
	wg.Wait()
}

// sameDeclarations reports whether two generations declare the same
// attributes, in the same order, and as many compartments.
func sameDeclarations(a, b celrule.Declarations) bool {
	if a.Compartments != b.Compartments || len(a.Attributes) != len(b.Attributes) {
		return false
	}
	for i := range a.Attributes {
		if !proto.Equal(a.Attributes[i], b.Attributes[i]) {
			return false
		}
	}
	return true
}

// compiler compiles one tool's rules, collecting its problems.
type compiler struct {
	r        *Rules
	reuse    map[programKey]*celrule.Program
	tool     *call.Tool
	ids      map[string]bool
	problems []string
}

func (c *compiler) problem(id, format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf("tool %s instance rule %q ", c.tool.FQN, id)+fmt.Sprintf(format, args...))
}

// declare checks id is a rule id not used before in the tool.
func (c *compiler) declare(id string) bool {
	if c.ids == nil {
		c.ids = map[string]bool{}
	}
	switch {
	case !ruleID(id):
		c.problem(id, "has no valid id (^[a-z][a-z0-9_]{0,63}$)")
		return false
	case c.ids[id]:
		c.problem(id, "is declared twice")
		return false
	}
	c.ids[id] = true
	return true
}

func (c *compiler) rule(phase planv1.RulePhase, rule *toolv1.InstanceRule, answer protoreflect.MessageDescriptor) Rule {
	out := Rule{ID: rule.GetId(), AuditOnly: rule.GetAuditOnly()}
	if !c.declare(rule.GetId()) {
		return out
	}
	if phase == planv1.RulePhase_RULE_PHASE_REQUIRE {
		answer = nil
	}
	out.program = c.compile(rule.GetId(), phase, answer, rule.GetExpression())
	return out
}

func (c *compiler) filter(f *toolv1.RowFilter) Filter {
	out := Filter{Rule: Rule{ID: f.GetId(), AuditOnly: f.GetAuditOnly()}}
	if !c.declare(f.GetId()) {
		return out
	}
	// The paths are read as the build reads them (compile.FilterRow,
	// compile.SingularPath): a catalogue the build accepts mounts.
	if _, err := compile.FilterRow(c.tool.Output, f.GetField()); err != nil {
		c.problem(f.GetId(), "filters %q: %v", f.GetField(), err)
		return out
	}
	out.path, _ = compile.SingularPath(c.tool.Output, f.GetField())
	for _, p := range f.GetClearOnRemoval() {
		path, err := compile.SingularPath(c.tool.Output, p)
		if err != nil {
			c.problem(f.GetId(), "clears %q: %v", p, err)
			return out
		}
		out.clear = append(out.clear, path)
	}
	row := out.path[len(out.path)-1].Message()
	out.program = c.compile(f.GetId(), planv1.RulePhase_RULE_PHASE_FILTER, row, f.GetKeep())
	return out
}

// compile is the program of expression, taken from the serving generation
// when the key proves it the same.
func (c *compiler) compile(id string, phase planv1.RulePhase, answer protoreflect.MessageDescriptor, expression string) *celrule.Program {
	key := programKey{phase: phase, request: c.tool.Input, answer: answer, expression: expression}
	r := c.r
	r.mu.Lock()
	p, ok := r.programs[key]
	if !ok {
		if p, ok = c.reuse[key]; ok {
			r.programs[key] = p
			r.Reused++
		}
	}
	r.mu.Unlock()
	if ok {
		return p
	}
	p, err := r.env.Compile(celrule.Target{Phase: phase, Request: c.tool.Input, Answer: answer}, expression)
	if err != nil {
		c.problem(id, "does not compile: %v", err)
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if first, ok := r.programs[key]; ok {
		return first
	}
	r.programs[key] = p
	return p
}

// ruleID reports whether id matches ^[a-z][a-z0-9_]{0,63}$.
func ruleID(id string) bool {
	if id == "" || len(id) > 64 || id[0] < 'a' || id[0] > 'z' {
		return false
	}
	for _, b := range []byte(id) {
		if (b < 'a' || b > 'z') && (b < '0' || b > '9') && b != '_' {
			return false
		}
	}
	return true
}

// Of is t's rules, or nil when it has none.
func (r *Rules) Of(t *call.Tool) *Tool {
	if r == nil || t.Index < 0 || t.Index >= len(r.tools) {
		return nil
	}
	return r.tools[t.Index]
}

// Carrying is how many tools have at least one rule.
func (r *Rules) Carrying() int {
	if r == nil {
		return 0
	}
	return r.carrying
}

// Count is how many rules the generation's tools have.
func (r *Rules) Count() int {
	if r == nil {
		return 0
	}
	return r.count
}

// View is p's variables as the rules read them, bound by this generation's
// declarations: built once per verified principal and generation (authn's
// cache holds it beside the principal), and read-only.
func (r *Rules) View(p *call.Principal) *celrule.View {
	v := r.env.NewPrincipalView(celrule.Principal{
		Subject:      p.Subject,
		Tenant:       p.Tenant,
		Clearance:    p.Clearance,
		Compartments: p.CompartmentNames,
		Delegated:    len(p.Act) > 0,
		Agent:        p.Agent(),
	})
	// Bound one by one, typed: no map of boxed values per token.
	for name, a := range p.Attrs {
		switch a.Type {
		case toolv1.Attribute_TYPE_STRING:
			v.BindString(name, a.String)
		case toolv1.Attribute_TYPE_INT:
			v.BindInt(name, a.Int)
		case toolv1.Attribute_TYPE_BOOL:
			v.BindBool(name, a.Bool)
		case toolv1.Attribute_TYPE_STRING_LIST:
			v.BindList(name, a.List)
		}
	}
	return v
}
