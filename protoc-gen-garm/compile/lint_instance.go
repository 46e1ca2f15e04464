package compile

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/protoc-gen-garm/compile/instance"
)

// attributes checks the attribute declarations: L44 (each sound, and one
// name declared one way only).
func (l *linter) attributes() {
	first := map[string]DeclaredAttribute{}
	for _, d := range l.model.Attributes {
		a := d.Attribute
		if problem := AttributeProblem(a); problem != "" {
			l.report(Error, "L44", d.File, "attribute %q: %s", a.GetName(), problem)
		}
		prev, seen := first[a.GetName()]
		switch {
		case !seen:
			first[a.GetName()] = d
		case !proto.Equal(prev.Attribute, a):
			l.report(Error, "L44", d.File, "attribute %q is declared differently in %s", a.GetName(), prev.File)
		}
	}
}

// instanceRules checks one tool's instance rules: L37–L43 refuse, L45–L49
// warn.
func (l *linter) instanceRules(t *Tool) {
	ip := t.Policy.GetInstance()
	if len(ip.GetRequire())+len(ip.GetReveal())+len(ip.GetFilter()) == 0 {
		return
	}
	path := t.Path()
	if len(ip.GetReveal()) > 0 && t.Policy.GetVerb() != toolv1.Verb_VERB_READ {
		l.report(Error, "L41", path, "reveal rules run on VERB_READ tools only: a withheld answer must not hide that a change was made")
	}
	env, err := l.model.InstanceEnv()
	if err != nil {
		l.report(Error, "L44", path, "instance rules cannot be checked: %v", err)
		return
	}
	ids := map[string]bool{}
	for _, r := range Rules(env, t) {
		what := fmt.Sprintf("%s rule %q", phaseName(r.Phase), r.ID)
		switch {
		case !toolNamePattern.MatchString(r.ID):
			l.report(Error, "L42", path, "%s: its id does not match %s", what, toolNamePattern)
		case ids[r.ID]:
			l.report(Error, "L42", path, "%s: the id is used by another rule of the tool", what)
		}
		ids[r.ID] = true
		if strings.TrimSpace(r.Description) == "" {
			l.report(Error, "L42", path, "%s needs a description: callers and models are shown it", what)
		}
		if r.FieldErr != nil {
			l.report(Error, "L38", path, "%s: %v", what, r.FieldErr)
			continue
		}
		if r.Err != nil {
			rule, costly := "L37", new(instance.CostError)
			if errors.As(r.Err, &costly) {
				rule = "L39"
			}
			l.report(Error, rule, path, "%s: %v", what, r.Err)
			continue
		}
		if r.AuditOnly {
			l.report(Warning, "L45", path, "%s is audit-only: it decides nothing until audit_only is removed", what)
		}
		l.ruleReads(t, r, what)
	}
}

// ruleReads checks what one compiled rule reads: L40, L43, L46–L49.
func (l *linter) ruleReads(t *Tool, r Rule, what string) {
	p, path := r.Program, t.Path()
	minimum, held := t.Policy.GetMinClearance(), t.Policy.GetCompartments()
	for _, c := range p.Compartments() {
		if !l.compartmentDeclared(c) {
			l.report(l.scope.severity(), "L43", path, "%s tests compartment %q, which is not declared in any file%s%s", what, c, l.compartmentHint(c), l.scope.suffix())
		}
	}
	if p.HoldsForEveryCaller(minimum) {
		l.report(Warning, "L47", path, "%s holds for every caller who can see the tool: it restricts no one", what)
	}
	answer := t.Desc.Output()
	if r.Phase == planv1.RulePhase_RULE_PHASE_FILTER {
		answer, _ = FilterRow(t.Desc.Output(), r.Field)
	}
	for _, over := range p.AllOver() {
		if !l.neverEmpty(t, over) {
			l.report(Warning, "L48", path, "%s uses all() over %s, which may be empty: all() over an empty list holds", what, over)
		}
	}
	for _, read := range p.Reads() {
		root, _, _ := strings.Cut(read, ".")
		switch root {
		case "request":
			if r.Phase == planv1.RulePhase_RULE_PHASE_REQUIRE {
				l.requireReads(t, r, what, read)
			}
		case "response", "row":
			for _, fd := range readFields(answer, read) {
				policy, _, err := l.policyOf(fd)
				if err != nil || policy == nil {
					continue
				}
				if !allows(minimum, policy.GetRead()) || !covers(held, policy.GetCompartments()) {
					l.report(Warning, "L49", path, "%s reads %s, which a caller at the tool's minimum may not read: the verdict discloses a bit of it", what, read)
					break
				}
			}
		}
	}
}

// requireReads is L40 and L46 for one request path a require rule reads.
func (l *linter) requireReads(t *Tool, r Rule, what, read string) {
	path, minimum, held := t.Path(), t.Policy.GetMinClearance(), t.Policy.GetCompartments()
	fds := readFields(t.Desc.Input(), read)
	prefix := "request"
	warned := false
	for _, fd := range fds {
		prefix += "." + string(fd.Name())
		policy, _, err := l.policyOf(fd)
		if err == nil && policy != nil {
			write := policy.GetWrite()
			if write == toolv1.Clearance_CLEARANCE_UNSPECIFIED {
				write = policy.GetRead()
			}
			switch {
			case policy.GetSource() == toolv1.Source_SOURCE_RUNNER:
				l.report(Error, "L40", path, "%s reads %s, which the runner fills (SOURCE_RUNNER): the caller does not choose it", what, prefix)
				return
			case !allows(minimum, write) || !covers(held, policy.GetCompartments()):
				l.report(Error, "L40", path, "%s reads %s, which a caller at the tool's minimum (%s) may not write", what, prefix, minimum)
				return
			}
		}
		if warned || fd.IsList() || fd.IsMap() || validationRequired(fd) || slices.Contains(r.Program.Tested(), prefix) {
			continue
		}
		kind := "an unset scalar reads as its zero value"
		if fd.Message() != nil {
			kind = "an unset message reads as its default"
		}
		l.report(Warning, "L46", path, "%s reads %s, which may be absent: %s; require it with (buf.validate.field).required or test has(%s)", what, prefix, kind, prefix)
		warned = true
	}
}

// neverEmpty reports whether the list at a rule's read path cannot be
// empty: a request list whose protovalidate rules require an item.
func (l *linter) neverEmpty(t *Tool, read string) bool {
	if !strings.HasPrefix(read, "request.") {
		return false
	}
	fds := readFields(t.Desc.Input(), read)
	if len(fds) == 0 || !fds[len(fds)-1].IsList() {
		return false
	}
	rules, err := fieldRules(fds[len(fds)-1])
	return err == nil && rules.GetRepeated().GetMinItems() > 0
}

func phaseName(p planv1.RulePhase) string {
	return strings.ToLower(strings.TrimPrefix(p.String(), "RULE_PHASE_"))
}
