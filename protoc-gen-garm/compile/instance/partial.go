package instance

import (
	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

// HoldsForEveryCaller reports whether the rule holds whatever the caller and
// the call, knowing only the caller's clearance, at every level from minimum
// (the tool's) up: such a rule (a tautology like "… || true") restricts no
// one who can see the tool. Everything but principal.clearance is unknown
// to CEL's partial evaluation, so a rule that depends on anything else is not
// reported. For lint; not for calls.
func (p *Program) HoldsForEveryCaller(minimum toolv1.Clearance) bool {
	prg, err := p.env.Program(p.checked, cel.EvalOptions(cel.OptPartialEval))
	if err != nil {
		return false
	}
	unknown := []*cel.AttributePatternType{cel.AttributePattern("request")}
	if p.answer != "" {
		unknown = append(unknown, cel.AttributePattern(p.answer))
	}
	for _, v := range []string{varSubject, varTenant, varCompartments, varDelegated, varAgent} {
		unknown = append(unknown, cel.AttributePattern(v))
	}
	for name := range p.envAttrs {
		unknown = append(unknown, cel.AttributePattern(attrPrefix+name))
	}
	levels := toolv1.Clearance_CLEARANCE_UNSPECIFIED.Descriptor().Values()
	checked := 0
	for i := range levels.Len() {
		level := levels.Get(i).Number()
		if level == 0 || level < protoNumber(minimum) {
			continue
		}
		vars, err := cel.PartialVars(map[string]any{varClearance: types.Int(level)}, unknown...)
		if err != nil {
			return false
		}
		out, _, err := prg.Eval(vars)
		if err != nil || out != types.True {
			return false
		}
		checked++
	}
	return checked > 0
}
