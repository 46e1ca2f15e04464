package compile

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
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

// toolNamePattern is what a tool's short name must match.
var toolNamePattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// Lint checks the model against the rules and returns every finding, sorted
// by path, then rule number, then message, so output is stable.
func Lint(m *Model) Diagnostics {
	var ds Diagnostics
	ds = append(ds, lintToolNames(m)...)
	ds = append(ds, lintStreaming(m)...)
	slices.SortStableFunc(ds, func(a, b Diagnostic) int {
		return cmp.Or(
			strings.Compare(a.Path, b.Path),
			cmp.Compare(ruleNumber(a.Rule), ruleNumber(b.Rule)),
			strings.Compare(a.Rule, b.Rule),
			strings.Compare(a.Message, b.Message),
		)
	})
	return ds
}

// ruleNumber orders rule ids by number, so L3 comes before L10.
func ruleNumber(rule string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(rule, "L"))
	if err != nil {
		return -1
	}
	return n
}

// lintToolNames is L3: a name must match the pattern, and a short name is
// used by one tool only in the linted set (both are named).
func lintToolNames(m *Model) Diagnostics {
	var ds Diagnostics
	first := map[string]*Tool{}
	for _, pkg := range m.Packages {
		for _, t := range pkg.Tools {
			if !toolNamePattern.MatchString(t.Name) {
				ds = append(ds, Diagnostic{Error, "L3", t.Path(),
					fmt.Sprintf("tool name %q does not match %s", t.Name, toolNamePattern)})
				continue
			}
			if other, dup := first[t.Name]; dup {
				ds = append(ds, Diagnostic{Error, "L3", t.Path(),
					fmt.Sprintf("tool name %q is also used by %s", t.Name, other.Path())})
				continue
			}
			first[t.Name] = t
		}
	}
	return ds
}

// lintStreaming is L4: a tool is one request and one answer.
func lintStreaming(m *Model) Diagnostics {
	var ds Diagnostics
	for _, pkg := range m.Packages {
		for _, t := range pkg.Tools {
			if t.Desc.IsStreamingClient() || t.Desc.IsStreamingServer() {
				ds = append(ds, Diagnostic{Error, "L4", t.Path(), "a streaming method cannot be a tool"})
			}
		}
	}
	return ds
}
