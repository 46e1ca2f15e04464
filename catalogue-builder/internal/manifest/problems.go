package manifest

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// A Problem is one thing wrong with a manifest, at the position of the YAML
// node it concerns. Its Error is `<path>:<line>:<column>: <message>`, the form
// editors and terminals turn into a link.
type Problem struct {
	Path    string // the manifest path as given to Load or Parse
	Line    int    // 1-based
	Column  int    // 1-based; 1 for YAML syntax errors, whose column the parser does not report
	Message string
}

func (p Problem) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", p.Path, p.Line, p.Column, p.Message)
}

// Problems is every problem found in one manifest, sorted by position. Load
// and Parse return it as their error; use errors.As to reach the list.
type Problems []Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.Error()
	}
	return strings.Join(lines, "\n")
}

func (ps Problems) sorted() Problems {
	slices.SortStableFunc(ps, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
	return ps
}
