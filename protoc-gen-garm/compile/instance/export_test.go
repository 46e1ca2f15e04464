package instance

import (
	"fmt"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/ast"
)

// Checked is the checked tree p was compiled to.
func (p *Program) Checked() *cel.Ast { return p.checked }

// CompileAlone is Compile as it was before an Env kept each text parsed
// (docs/decisions/0141): the text parsed for this target alone, the fresh
// parse checked with its macro-call records, and the walker reading all()
// from the checked tree's records. The differential test holds Compile to
// it.
func (e *Env) CompileAlone(t Target, expression string) (*Program, error) {
	env, err := e.targetEnv(t)
	if err != nil {
		return nil, err
	}
	parsed, iss := env.Parse(expression)
	if iss.Err() != nil {
		return nil, fmt.Errorf("does not parse: %s", oneLine(iss.Err().Error()))
	}
	if err := e.checkPrincipalNames(parsed.NativeRep().Expr()); err != nil {
		return nil, err
	}
	// The fresh parse's records, which the checked tree carries too.
	all := map[int64]bool{}
	for id, call := range parsed.NativeRep().SourceInfo().MacroCalls() {
		all[id] = isAllCall(call)
	}
	return e.program(t, env, parsed, all)
}

// DropMacroCalls removes a's macro-call records, in place, and the source
// offsets of the nodes only they held: what CEL's checker keeps of a tree
// checked without them (it clears the offsets of nodes in neither the
// expression nor a record).
func DropMacroCalls(a *cel.Ast) {
	info := a.NativeRep().SourceInfo()
	for id := range info.MacroCalls() {
		info.ClearMacroCall(id)
	}
	a.NativeRep().ClearUnusedIDs()
}

// OffsetRanges is a's source offsets, by expression ID.
func OffsetRanges(a *cel.Ast) map[int64]ast.OffsetRange {
	return a.NativeRep().SourceInfo().OffsetRanges()
}
