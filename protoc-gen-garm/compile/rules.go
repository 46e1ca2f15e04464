package compile

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"

	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	"github.com/garm-dev/garm/protoc-gen-garm/compile/instance"
)

// Rule is one instance rule of a tool, as declared, with what compiling it
// gave.
type Rule struct {
	Phase       planv1.RulePhase
	ID          string
	Description string
	Expression  string
	AuditOnly   bool
	// Field and ClearOnRemoval are a filter's; empty otherwise.
	Field          string
	ClearOnRemoval []string
	// Program is the compiled rule, or nil when Err says why not.
	Program *instance.Program
	Err     error
	// FieldErr is why a filter's field or clear_on_removal path is wrong.
	FieldErr error
}

// Rules compiles every instance rule of t, in order (require, reveal,
// filter), in env. A rule that does not compile carries its error.
func Rules(env *instance.Env, t *Tool) []Rule {
	ip := t.Policy.GetInstance()
	req, resp := t.Desc.Input(), t.Desc.Output()
	var out []Rule
	for _, r := range ip.GetRequire() {
		rule := Rule{Phase: planv1.RulePhase_RULE_PHASE_REQUIRE, ID: r.GetId(), Description: r.GetDescription(), Expression: r.GetExpression(), AuditOnly: r.GetAuditOnly()}
		rule.Program, rule.Err = env.Compile(instance.Target{Phase: rule.Phase, Request: req}, rule.Expression)
		out = append(out, rule)
	}
	for _, r := range ip.GetReveal() {
		rule := Rule{Phase: planv1.RulePhase_RULE_PHASE_REVEAL, ID: r.GetId(), Description: r.GetDescription(), Expression: r.GetExpression(), AuditOnly: r.GetAuditOnly()}
		rule.Program, rule.Err = env.Compile(instance.Target{Phase: rule.Phase, Request: req, Answer: resp}, rule.Expression)
		out = append(out, rule)
	}
	for _, f := range ip.GetFilter() {
		rule := Rule{Phase: planv1.RulePhase_RULE_PHASE_FILTER, ID: f.GetId(), Description: f.GetDescription(), Expression: f.GetKeep(),
			AuditOnly: f.GetAuditOnly(), Field: f.GetField(), ClearOnRemoval: f.GetClearOnRemoval()}
		row, err := FilterRow(resp, f.GetField())
		for _, c := range f.GetClearOnRemoval() {
			if err != nil {
				break
			}
			if _, cerr := SingularPath(resp, c); cerr != nil {
				err = fmt.Errorf("clear_on_removal %q: %w", c, cerr)
			}
		}
		if err != nil {
			rule.FieldErr = err
		} else {
			rule.Program, rule.Err = env.Compile(instance.Target{Phase: rule.Phase, Request: req, Answer: row}, rule.Expression)
		}
		out = append(out, rule)
	}
	return out
}

// FilterRow is the element message of the repeated message field a filter
// names, reached from the answer through singular message fields.
func FilterRow(answer protoreflect.MessageDescriptor, field string) (protoreflect.MessageDescriptor, error) {
	fds, err := SingularPath(answer, field)
	if err != nil {
		return nil, err
	}
	last := fds[len(fds)-1]
	if !last.IsList() || last.Message() == nil {
		return nil, fmt.Errorf("field %q of %s is not a repeated message field", field, answer.FullName())
	}
	return last.Message(), nil
}

// SingularPath resolves a dotted path from md whose every step but the last
// is a singular message field: a filter's field and its clear_on_removal
// paths, read the same by the build and by garmd.
func SingularPath(md protoreflect.MessageDescriptor, path string) ([]protoreflect.FieldDescriptor, error) {
	if path == "" {
		return nil, fmt.Errorf("no field is named")
	}
	var fds []protoreflect.FieldDescriptor
	for i, name := range strings.Split(path, ".") {
		if md == nil {
			return nil, fmt.Errorf("%q goes through %s, which is not a singular message field", path, fds[i-1].Name())
		}
		fd := md.Fields().ByName(protoreflect.Name(name))
		if fd == nil {
			return nil, fmt.Errorf("%s has no field %q", md.FullName(), name)
		}
		fds = append(fds, fd)
		md = nil
		if !fd.IsList() && !fd.IsMap() && fd.Message() != nil {
			md = fd.Message()
		}
	}
	return fds, nil
}

// readFields resolves a read path of a rule ("request.item.owner",
// "row.owner") to the fields it goes through from root, as far as they are
// fields (a map key or a scalar ends it).
func readFields(root protoreflect.MessageDescriptor, path string) []protoreflect.FieldDescriptor {
	_, rest, ok := strings.Cut(path, ".")
	if !ok {
		return nil
	}
	var fds []protoreflect.FieldDescriptor
	md := root
	for _, name := range strings.Split(rest, ".") {
		if md == nil {
			break
		}
		fd := md.Fields().ByName(protoreflect.Name(name))
		if fd == nil {
			break
		}
		fds = append(fds, fd)
		md = ChildMessage(fd)
	}
	return fds
}

// PlanRules is what the build computed for the instance rules of pkg's
// tools: tools in name order, rules in declaration order (require, reveal,
// filter), each with its sorted reads and cost bound. It fails where lint
// refuses: plans are built only from a model that passed Lint.
func PlanRules(m *Model, pkg *Package) ([]*planv1.RulePlan, error) {
	env, err := m.InstanceEnv()
	if err != nil {
		return nil, err
	}
	tools := append([]*Tool(nil), pkg.Tools...)
	sortToolsByName(tools)
	var plans []*planv1.RulePlan
	for _, t := range tools {
		for _, r := range Rules(env, t) {
			if r.FieldErr != nil {
				return nil, fmt.Errorf("%s: filter %q: %w", t.Path(), r.ID, r.FieldErr)
			}
			if r.Err != nil {
				return nil, fmt.Errorf("%s: rule %q: %w", t.Path(), r.ID, r.Err)
			}
			plans = append(plans, &planv1.RulePlan{
				Tool: t.Name, Id: r.ID, Phase: r.Phase,
				Reads: r.Program.Reads(), CostBound: r.Program.CostBound(), AuditOnly: r.AuditOnly,
			})
		}
	}
	return plans, nil
}

func sortToolsByName(tools []*Tool) {
	for i := 1; i < len(tools); i++ {
		for j := i; j > 0 && tools[j].Name < tools[j-1].Name; j-- {
			tools[j], tools[j-1] = tools[j-1], tools[j]
		}
	}
}
