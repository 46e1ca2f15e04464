package inspect

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

// WriteText writes the View for a person: the catalogue's identity and
// provenance, its signatures when it has any, its taxonomy, then each package with one block per tool.
// Labels and values are aligned within each block.
func WriteText(w io.Writer, v View) error {
	p := &printer{w: w}
	header := [][2]string{
		{"digest", v.Digest},
		{"schema version", fmt.Sprint(v.AnnotationSchemaVersion)},
		{"size", fmt.Sprintf("%d bytes", v.SizeBytes)},
		{"producer", orNone(v.Provenance.Producer)},
		{"compiler", orNone(v.Provenance.Compiler)},
		{"source", orNone(v.Provenance.Source)},
	}
	if v.Provenance.BuiltAt != "" {
		header = append(header, [2]string{"built at", v.Provenance.BuiltAt})
	}
	p.block("", header)
	if v.Signatures != nil {
		p.line("")
		p.line("signatures")
		p.block("  ", signatureRows(v.Signatures))
	}
	p.taxonomy("compartments", v.Taxonomy.Compartments)
	p.taxonomy("tool sets", v.Taxonomy.ToolSets)
	p.attributes(v.Taxonomy.Attributes)
	for _, pkg := range v.Packages {
		p.line("")
		p.line("package " + pkg.Name)
		p.block("  ", [][2]string{{"descriptor hash", pkg.DescriptorHash}})
		for _, t := range pkg.Tools {
			p.line("")
			p.line("  " + t.FQN)
			p.block("    ", toolRows(t))
		}
	}
	return p.err
}

// toolRows are the labelled lines of one tool; a grant's terms and an
// audit's are indented under the line they qualify.
func toolRows(t Tool) [][2]string {
	rows := [][2]string{
		{"method", t.Method},
		{"verb", t.Verb},
		{"min clearance", t.MinClearance},
		{"compartments", list(t.Compartments)},
		{"sets", list(t.Sets)},
		{"approval", t.Approval.Mode},
	}
	if g := t.Approval.Grant; g != nil {
		approver := g.ApproverMinClearance
		if len(g.ApproverCompartments) > 0 {
			approver += " with " + list(g.ApproverCompartments)
		}
		rows = append(rows,
			[2]string{"  approver", approver},
			[2]string{"  four eyes", yesNo(g.DistinctApprover)},
			[2]string{"  max age", fmt.Sprintf("%ds", g.MaxGrantAgeSeconds)},
			[2]string{"  material", list(g.MaterialFields)},
		)
	}
	rows = append(rows, [2]string{"audit", t.Audit.Level})
	// Retention and fail_closed qualify the audit stream's write-ahead row,
	// which only LEVEL_AUDIT writes.
	if t.Audit.Level == EnumName(toolv1.ToolPolicy_Audit_LEVEL_AUDIT) {
		rows = append(rows,
			[2]string{"  retain", fmt.Sprintf("%d days", t.Audit.RetainDays)},
			[2]string{"  fail closed", yesNo(t.Audit.FailClosed)},
		)
	}
	rows = append(rows, ruleRows(t.Rules)...)
	return append(rows, limitRows(t.Limits)...)
}

// limitRows is one row per limit: "limit <id>", then its bound and, when
// catalogue.yaml set or tightened it, where it came from.
func limitRows(limits []Limit) [][2]string {
	rows := make([][2]string, 0, len(limits))
	for _, l := range limits {
		what := l.Bound
		switch {
		case l.Contract != "":
			what += "  (tightened by catalogue.yaml from " + l.Contract + ")"
		case l.Origin == "DEPLOYMENT":
			what += "  (added by catalogue.yaml)"
		}
		rows = append(rows, [2]string{"limit " + l.ID, what})
	}
	return rows
}

// printer writes lines and aligned blocks, keeping the first error.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) line(s string) {
	if p.err == nil {
		_, p.err = io.WriteString(p.w, s+"\n")
	}
}

// block writes label/value rows under one indent with the values aligned.
func (p *printer) block(indent string, rows [][2]string) {
	if p.err != nil {
		return
	}
	tw := tabwriter.NewWriter(p.w, 0, 0, 2, ' ', 0)
	for _, r := range rows {
		fmt.Fprintf(tw, "%s%s\t%s\n", indent, r[0], r[1])
	}
	p.err = tw.Flush()
}

func (p *printer) taxonomy(title string, decls []Decl) {
	p.line("")
	p.line(title)
	if len(decls) == 0 {
		p.line("  none")
		return
	}
	rows := make([][2]string, len(decls))
	for i, d := range decls {
		rows[i] = [2]string{d.Name, orNone(d.Description)}
	}
	p.block("  ", rows)
}

func (p *printer) attributes(attrs []Attribute) {
	p.line("")
	p.line("attributes")
	if len(attrs) == 0 {
		p.line("  none")
		return
	}
	rows := make([][2]string, len(attrs))
	for i, a := range attrs {
		shape := a.Type
		if a.MaxItems > 0 {
			shape += fmt.Sprintf(", max_items %d", a.MaxItems)
		}
		if a.MaxLen > 0 {
			shape += fmt.Sprintf(", max_len %d", a.MaxLen)
		}
		rows[i] = [2]string{a.Name, shape + "  " + orNone(a.Description)}
	}
	p.block("  ", rows)
}

// ruleRows is one row per instance rule: "<phase> <id>", then what it says.
func ruleRows(rules []Rule) [][2]string {
	rows := make([][2]string, 0, len(rules))
	for _, r := range rules {
		what := r.Expression
		if r.Field != "" {
			what = r.Field + ": " + what
		}
		if r.AuditOnly {
			what += "  (audit only)"
		}
		rows = append(rows, [2]string{"rule " + r.Phase + " " + r.ID, what})
	}
	return rows
}

func list(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
