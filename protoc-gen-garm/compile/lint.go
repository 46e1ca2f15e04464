package compile

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Severity says whether a diagnostic refuses the build.
type Severity int

const (
	// Error refuses the build: nothing is emitted.
	Error Severity = iota + 1
	// Warning is printed and never fails.
	Warning
)

func (s Severity) String() string {
	if s == Error {
		return "error"
	}
	return "warning"
}

// Diagnostic is one finding of the lint gate. Rule is a stable id ("L3");
// Path names where: "pkg.Svc.Method(input).field", "pkg.Svc.Method",
// "pkg.Svc" or a file name.
type Diagnostic struct {
	Severity Severity
	Rule     string
	Path     string
	Message  string
}

// String is the diagnostic as printed: "<severity>: <rule>: <path>: <message>".
func (d Diagnostic) String() string {
	return fmt.Sprintf("%s: %s: %s: %s", d.Severity, d.Rule, d.Path, d.Message)
}

// Diagnostics is a lint result.
type Diagnostics []Diagnostic

// HasErrors reports whether any diagnostic refuses the build.
func (ds Diagnostics) HasErrors() bool { return ds.Errors() > 0 }

// Errors counts the diagnostics that refuse the build.
func (ds Diagnostics) Errors() int {
	n := 0
	for _, d := range ds {
		if d.Severity == Error {
			n++
		}
	}
	return n
}

// String is every diagnostic, one per line.
func (ds Diagnostics) String() string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString(d.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// Scope is how much of a catalogue a lint run sees.
type Scope int

const (
	// ModuleScope is what protoc-gen-garm sees: one buf module's files and
	// their imports. Rules that need the whole catalogue (a tool name used in
	// another package, a compartment, tool set or compensating tool
	// declared elsewhere) are warnings naming the command that checks them.
	ModuleScope Scope = iota + 1
	// CatalogueScope is the whole catalogue, as garm-catalogue sees it:
	// every rule at its own severity.
	CatalogueScope
)

// catalogueCheck ends a module-scope warning about a whole-catalogue rule.
const catalogueCheck = "garm-catalogue build checks it across the whole catalogue"

// severity is Error for a whole-catalogue rule in CatalogueScope, and a
// Warning in ModuleScope.
func (s Scope) severity() Severity {
	if s == CatalogueScope {
		return Error
	}
	return Warning
}

// suffix is what a whole-catalogue rule's message ends with in this scope.
func (s Scope) suffix() string {
	if s == CatalogueScope {
		return ""
	}
	return "; " + catalogueCheck
}

// Lint checks the model against every rule of the build gate and returns
// every finding, sorted by path, then rule number, then message, so output
// is stable.
func Lint(m *Model, scope Scope) Diagnostics {
	l := &linter{model: m, scope: scope}
	l.toolNames()
	l.tools()
	l.fields()
	l.taxonomy()
	l.attributes()
	ds := l.found
	slices.SortStableFunc(ds, func(a, b Diagnostic) int {
		return cmp.Or(
			strings.Compare(a.Path, b.Path),
			cmp.Compare(ruleNumber(a.Rule), ruleNumber(b.Rule)),
			strings.Compare(a.Rule, b.Rule),
			strings.Compare(a.Message, b.Message),
		)
	})
	return slices.CompactFunc(ds, func(a, b Diagnostic) bool { return a == b })
}

// linter accumulates the findings of one Lint run.
type linter struct {
	model *Model
	scope Scope
	found Diagnostics

	// Built on first use.
	compartments, toolSets map[string]bool
	toolsByName            map[string]*Tool
	policies               map[protoreflect.FieldDescriptor]resolvedPolicy
}

// resolvedPolicy is FieldPolicyOf's answer for one field.
type resolvedPolicy struct {
	policy *toolv1.FieldPolicy
	origin PolicyOrigin
	err    error
}

// policyOf is FieldPolicyOf, read once per field however many tools and
// rules reach it.
func (l *linter) policyOf(fd protoreflect.FieldDescriptor) (*toolv1.FieldPolicy, PolicyOrigin, error) {
	r, ok := l.policies[fd]
	if !ok {
		if l.policies == nil {
			l.policies = map[protoreflect.FieldDescriptor]resolvedPolicy{}
		}
		r.policy, r.origin, r.err = FieldPolicyOf(fd)
		l.policies[fd] = r
	}
	return r.policy, r.origin, r.err
}

func (l *linter) report(sev Severity, rule, path, format string, args ...any) {
	l.found = append(l.found, Diagnostic{sev, rule, path, fmt.Sprintf(format, args...)})
}

// ruleNumber orders rule ids by number, so L3 comes before L10.
func ruleNumber(rule string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(rule, "L"))
	if err != nil {
		return -1
	}
	return n
}

// toolNamePattern is what a tool's short name must match.
var toolNamePattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// toolNames is L3: a name must match the pattern, and a short name is used
// by one tool only (both are named). Within a package a second use is always
// an error; across packages it is a whole-catalogue rule.
func (l *linter) toolNames() {
	first := map[string]*Tool{}
	for _, pkg := range l.model.Packages {
		for _, t := range pkg.Tools {
			if !toolNamePattern.MatchString(t.Name) {
				l.report(Error, "L3", t.Path(), "tool name %q does not match %s", t.Name, toolNamePattern)
				continue
			}
			other, dup := first[t.Name]
			if !dup {
				first[t.Name] = t
				continue
			}
			if other.Service.Desc.ParentFile().Package() == pkg.Name {
				l.report(Error, "L3", t.Path(), "tool name %q is also used by %s", t.Name, other.Path())
			} else {
				l.report(l.scope.severity(), "L3", t.Path(), "tool name %q is also used by %s%s", t.Name, other.Path(), l.scope.suffix())
			}
		}
	}
}
