package diff

import (
	"strings"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	"github.com/garm-dev/garm/protoc-gen-garm/compile"
)

// limitsByTool indexes a catalogue's effective limits by tool FQN, then id.
func limitsByTool(a *artifact.Artifact) map[string]map[string]*planv1.LimitPlan {
	out := map[string]map[string]*planv1.LimitPlan{}
	for _, p := range a.Catalogue.GetLimits() {
		if out[p.GetTool()] == nil {
			out[p.GetTool()] = map[string]*planv1.LimitPlan{}
		}
		out[p.GetTool()][p.GetLimit().GetId()] = p
	}
	return out
}

// limits reports the effective limits of a tool both catalogues hold,
// matched by id, whether the contract or catalogue.yaml set them: what
// garmd enforces is what is compared. A limit added narrows; a limit
// removed, or loosened (a higher count or in_flight, a lower cost, soft
// where it was hard), widens — more calls get through; a tighter one
// narrows. A change of kind, key or window, or one that is tighter in one
// term and looser in another, counts different things and is unclear.
// Descriptions are prose and not compared.
func (r *report) limits(fqn string, was, is map[string]*planv1.LimitPlan) {
	for id, n := range is {
		o, kept := was[id]
		if !kept {
			r.about(Narrowing, fqn, "new limit %s: %s", id, compile.DescribeLimit(n.GetLimit()))
			continue
		}
		order, terms := compile.CompareLimits(o.GetLimit(), n.GetLimit())
		what := strings.Join(terms, ", ")
		switch order {
		case compile.LimitTighter:
			r.about(Narrowing, fqn, "limit %s tightened: %s", id, what)
		case compile.LimitLooser:
			r.about(Widening, fqn, "limit %s loosened: %s", id, what)
		case compile.LimitMixed:
			r.about(Unclear, fqn, "limit %s changed: %s", id, what)
		case compile.LimitUnlike:
			r.about(Unclear, fqn, "limit %s changed to %s, was %s", id, compile.DescribeLimit(n.GetLimit()), compile.DescribeLimit(o.GetLimit()))
		}
	}
	for id, o := range was {
		if _, kept := is[id]; !kept {
			r.about(Widening, fqn, "limit %s removed (was %s)", id, compile.DescribeLimit(o.GetLimit()))
		}
	}
}
