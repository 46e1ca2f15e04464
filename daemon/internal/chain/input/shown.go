package input

import (
	"strings"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/fieldpath"
	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
)

// shownSet is the input schema one caller shape was listed (design 7.6), as
// step 3b needs it: which plan paths the caller was shown, and whether all
// of a path's subtree was.
type shownSet struct {
	// rules holds every plan rule by its dotted path.
	rules map[string]shownRule
	// all is true when every rule of the input is shown: the condition for
	// a rule whose reads are unknown.
	all bool
}

type shownRule struct {
	// shown: the caller may write the field, the runner does not supply
	// it, and no ancestor is hidden.
	shown bool
	// subtree: shown, and so is every rule below it.
	subtree bool
	// leaf: the plan describes nothing below it (design 3.5's LEAF), so a
	// path that goes on inside it is part of it.
	leaf bool
}

func (c *Checker) shownFor(plan *planv1.MessagePlan, ruleBits []call.Compartments, shape call.Shape) *shownSet {
	key := shapeKey{plan: plan, shape: shape}
	if s, ok := c.shown.Get(key); ok {
		return s
	}
	return c.shown.Put(key, resolveShown(plan, ruleBits, shape))
}

// resolveShown is the shown set's cache miss. The test per rule is the
// listing's (fieldpath.Shown), with a hidden message field taking its
// subtree. Plans list
// parents before children (design 3.5), so a parent is decided before its
// children; a rule whose parent path is missing from the plan is hidden.
func resolveShown(plan *planv1.MessagePlan, ruleBits []call.Compartments, shape call.Shape) *shownSet {
	rules := plan.GetRules()
	s := &shownSet{rules: make(map[string]shownRule, len(rules)), all: true}
	for i, r := range rules {
		path := r.GetPath()
		shown := fieldpath.Shown(shape, ruleBits, i, r)
		if parent, ok := parentPath(path); ok {
			shown = shown && s.rules[parent].shown
		}
		if prior, twice := s.rules[path]; twice {
			shown = shown && prior.shown
		}
		s.rules[path] = shownRule{shown: shown, subtree: shown, leaf: r.GetContainer() == planv1.Container_CONTAINER_LEAF}
		if shown {
			continue
		}
		s.all = false
		for p, ok := parentPath(path); ok; p, ok = parentPath(p) {
			if a, found := s.rules[p]; found && a.subtree {
				a.subtree = false
				s.rules[p] = a
			}
		}
	}
	return s
}

func parentPath(path string) (string, bool) {
	i := strings.LastIndexByte(path, '.')
	if i < 0 {
		return "", false
	}
	return path[:i], true
}

// reaches reports whether the caller was shown the field at names (dotted
// names from the root, indexes and keys stripped) — with subtree, the whole
// of it. A path that goes on below a LEAF is that leaf (a select into a
// Timestamp, a key of a map of scalars). A path the plan does not describe
// is not shown. The root itself is always there; its subtree is everything.
func (s *shownSet) reaches(names []string, subtree bool) bool {
	if len(names) == 0 {
		return !subtree || s.all
	}
	for k := len(names); k > 0; k-- {
		r, ok := s.rules[strings.Join(names[:k], ".")]
		if !ok {
			continue
		}
		if k == len(names) {
			if subtree {
				return r.subtree
			}
			return r.shown
		}
		return r.leaf && r.shown
	}
	return false
}

// covers reports whether the caller was shown everything a rule at base
// reads.
func (s *shownSet) covers(base []string, r *ruleReads) bool {
	if r.everything {
		return s.all
	}
	full := make([]string, 0, len(base)+4)
	for _, p := range r.paths {
		full = append(append(full[:0], base...), p.names...)
		if !s.reaches(full, p.subtree) {
			return false
		}
	}
	return true
}
