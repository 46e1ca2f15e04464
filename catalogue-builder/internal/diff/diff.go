package diff

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/protoc-gen-garm/compile"
)

// Direction says which way a change moves what callers can reach.
type Direction int

const (
	// Widening lets someone reach, read or write more than before. It is
	// the zero value, so a change built without a direction fails the
	// widening gate rather than slipping past it.
	Widening Direction = iota
	// Narrowing is the reverse of a widening.
	Narrowing
	// Unclear is a change that is neither, or both, and needs a person to
	// judge it.
	Unclear
)

// String is the direction as Write prints it.
func (d Direction) String() string {
	switch d {
	case Widening:
		return "widening"
	case Narrowing:
		return "narrowing"
	case Unclear:
		return "unclear"
	}
	return fmt.Sprintf("Direction(%d)", int(d))
}

// Change is one policy difference between two catalogues.
type Change struct {
	Direction Direction
	// Tool is the FQN of the tool the change is about, or "" for a change
	// to the catalogue as a whole.
	Tool string
	// Sentence says what changed and names the tool or field itself, so a
	// line reads alone.
	Sentence string
}

// Compare lists the policy differences from old to new: widening first,
// then narrowing, then unclear, each by tool and then by sentence. Tools
// are matched by FQN. A tool that is new or removed is one change, never
// also the changes of its fields.
func Compare(old, new *artifact.Artifact) []Change {
	r := &report{}
	r.taxonomy("compartment", old.Catalogue.GetCompartments(), new.Catalogue.GetCompartments())
	r.taxonomy("tool set", old.Catalogue.GetToolSets(), new.Catalogue.GetToolSets())
	r.attributes(old.Catalogue.GetAttributes(), new.Catalogue.GetAttributes())
	before, after := toolsByFQN(old), toolsByFQN(new)
	limitsBefore, limitsAfter := limitsByTool(old), limitsByTool(new)
	for fqn, t := range after {
		if before[fqn] == nil {
			p := t.Policy
			r.add(Widening, fqn, "new tool %s (%s, min clearance %s)",
				fqn, name(p.GetVerb()), label(p.GetMinClearance(), p.GetCompartments()))
		}
	}
	for fqn, t := range before {
		n := after[fqn]
		if n == nil {
			r.add(Narrowing, fqn, "tool %s removed", fqn)
			continue
		}
		r.tool(t, n)
		r.limits(fqn, limitsBefore[fqn], limitsAfter[fqn])
		r.fields(fqn, "input", plan(old, t, t.Desc.Input()), plan(new, n, n.Desc.Input()))
		r.fields(fqn, "output", plan(old, t, t.Desc.Output()), plan(new, n, n.Desc.Output()))
	}
	sortChanges(r.changes)
	return r.changes
}

// HasWidening reports whether any change widens; `garm-catalogue diff
// --fail-on-widening` fails on it.
func HasWidening(changes []Change) bool {
	return slices.ContainsFunc(changes, func(c Change) bool { return c.Direction == Widening })
}

// Write writes one line per change, "<direction>: <sentence>".
func Write(w io.Writer, changes []Change) error {
	var b strings.Builder
	for _, c := range changes {
		fmt.Fprintf(&b, "%s: %s\n", c.Direction, c.Sentence)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// sortChanges orders changes by direction, then tool, then sentence, so the
// output is the same whatever order the maps were walked in.
func sortChanges(changes []Change) {
	slices.SortFunc(changes, func(a, b Change) int {
		return cmp.Or(
			cmp.Compare(a.Direction, b.Direction),
			cmp.Compare(a.Tool, b.Tool),
			cmp.Compare(a.Sentence, b.Sentence),
		)
	})
}

// report collects changes as they are found.
type report struct {
	changes []Change
}

// add records a change whose sentence is the format's.
func (r *report) add(d Direction, tool, format string, args ...any) {
	r.changes = append(r.changes, Change{Direction: d, Tool: tool, Sentence: fmt.Sprintf(format, args...)})
}

// about records a change to a kept tool; its sentence starts with the FQN.
func (r *report) about(d Direction, tool, format string, args ...any) {
	r.add(d, tool, "%s: "+format, append([]any{tool}, args...)...)
}

// taxonomy reports a declaration whose description changed. A description
// is what an operator reads when deciding who may hold a compartment or a
// set, so a new meaning under an old name is worth a person's look; a
// declaration added or removed changes nothing on its own, and every use of
// one by a tool is reported with the tool.
func (r *report) taxonomy(kind string, old, new []*toolv1.Decl) {
	was := map[string]string{}
	for _, d := range old {
		was[d.GetName()] = d.GetDescription()
	}
	for _, d := range new {
		if before, ok := was[d.GetName()]; ok && before != d.GetDescription() {
			r.add(Unclear, "", "%s %s described as %q, was %q", kind, d.GetName(), d.GetDescription(), before)
		}
	}
}

func toolsByFQN(a *artifact.Artifact) map[string]*compile.Tool {
	out := map[string]*compile.Tool{}
	for _, t := range a.Tools() {
		out[t.FQN] = t
	}
	return out
}

// setDiff lists the names only in old and only in new, each sorted.
func setDiff(old, new []string) (removed, added []string) {
	for _, n := range old {
		if !slices.Contains(new, n) && !slices.Contains(removed, n) {
			removed = append(removed, n)
		}
	}
	for _, n := range new {
		if !slices.Contains(old, n) && !slices.Contains(added, n) {
			added = append(added, n)
		}
	}
	slices.Sort(removed)
	slices.Sort(added)
	return removed, added
}
