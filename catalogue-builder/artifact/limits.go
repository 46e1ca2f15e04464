package artifact

import (
	"cmp"
	"fmt"

	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/protoc-gen-garm/compile"
	"google.golang.org/protobuf/proto"
)

// checkLimits verifies the catalogue's effective limits against its tools'
// contracts, as the build resolved them (docs/decisions/0123): sorted by
// tool then id, once each, each for a tool of the catalogue, sound
// (compile.CheckLimit) and resolved (compile.ResolveLimit: a rate's cost
// never 0, the key in number order); a contract limit is carried, as
// declared or tightened, and never dropped; a tightened one carries the
// contract's limit it tightens and is no looser; one the deployment added
// shares no id with the contract's. garmd enforces these limits and only
// these, so an artifact that does not hold to this is refused, whoever
// wrote it.
func (a *Artifact) checkLimits() error {
	contracts := map[string]map[string]*toolv1.Limit{}
	for _, t := range a.Tools() {
		byID := make(map[string]*toolv1.Limit, len(t.Policy.GetLimits()))
		for _, l := range t.Policy.GetLimits() {
			byID[l.GetId()] = l
		}
		contracts[t.FQN] = byID
	}
	carried := 0
	var prev *planv1.LimitPlan
	for _, p := range a.Catalogue.GetLimits() {
		l := p.GetLimit()
		where := fmt.Sprintf("limit %q of tool %s", l.GetId(), p.GetTool())
		if prev != nil && cmp.Or(cmp.Compare(prev.GetTool(), p.GetTool()), cmp.Compare(prev.GetLimit().GetId(), l.GetId())) >= 0 {
			return fmt.Errorf("the limits are not sorted by tool then id, each once: %s follows limit %q of tool %s", where, prev.GetLimit().GetId(), prev.GetTool())
		}
		prev = p
		byID, known := contracts[p.GetTool()]
		if !known {
			return fmt.Errorf("%s: the catalogue has no such tool", where)
		}
		if problems := compile.CheckLimit(l); len(problems) > 0 {
			return fmt.Errorf("%s: %s", where, problems[0].Message)
		}
		if !proto.Equal(compile.ResolveLimit(l), l) {
			return fmt.Errorf("%s is not resolved: a rate's cost is given and the key's parts are in order", where)
		}
		contract := byID[l.GetId()]
		if contract != nil {
			contract = compile.ResolveLimit(contract)
			carried++
		}
		switch p.GetOrigin() {
		case planv1.LimitOrigin_LIMIT_ORIGIN_CONTRACT:
			if contract == nil || !proto.Equal(contract, l) || p.GetContract() != nil {
				return fmt.Errorf("%s is marked as the contract's and is not the contract's limit as declared", where)
			}
		case planv1.LimitOrigin_LIMIT_ORIGIN_TIGHTENED:
			if contract == nil || !proto.Equal(contract, p.GetContract()) {
				return fmt.Errorf("%s is marked as tightened and does not carry the contract's limit it tightens", where)
			}
			if order, terms := compile.CompareLimits(contract, l); order != compile.LimitSame && order != compile.LimitTighter {
				return fmt.Errorf("%s does not tighten the contract's (%s): %v", where, compile.DescribeLimit(contract), terms)
			}
		case planv1.LimitOrigin_LIMIT_ORIGIN_DEPLOYMENT:
			if contract != nil || p.GetContract() != nil {
				return fmt.Errorf("%s is marked as the deployment's, and the contract declares a limit of that id", where)
			}
		default:
			return fmt.Errorf("%s has no origin this build knows (%v)", where, p.GetOrigin())
		}
	}
	declared := 0
	for _, byID := range contracts {
		declared += len(byID)
	}
	if carried != declared {
		return fmt.Errorf("the catalogue carries %d of the %d limits its tools' contracts declare: a contract's limit is never dropped", carried, declared)
	}
	return nil
}
