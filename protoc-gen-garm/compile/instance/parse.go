package instance

import (
	"fmt"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/ast"
)

// maxParses bounds how many rule texts an Env keeps parsed: a catalogue
// whose rules all differ keeps the first maxParses and parses the rest
// each time, as if there were no cache.
const maxParses = 1 << 12

// parse is one rule text parsed, once per Env, and checked for principal
// names: a pure function of the text, the parser's options and the
// declarations, none of which a Target changes (a target's environment
// extends the base with types and variables only).
type parse struct {
	// ast is the parsed expression, without macro-call records. It is never
	// checked: the checker rewrites the tree it checks, so each Compile
	// checks a deep copy of it (copyParse).
	ast *cel.Ast
	// all is the IDs of the comprehensions all() expanded to, read from the
	// macro-call records before they were dropped. IDs survive the copy
	// and the checker, so the walker finds them in the checked tree.
	all map[int64]bool
	// err refuses the text, whatever the target: it does not parse, or it
	// names something of principal's that is not declared.
	err error
}

// copier copies a parsed Ast with its source (an optimizer with no
// optimizations returns a deep copy of its input).
var copier = func() *cel.StaticOptimizer {
	o, err := cel.NewStaticOptimizer()
	if err != nil {
		panic(err)
	}
	return o
}()

// parsed is expression parsed, from the Env's cache or parsed now and kept.
//
// Why the macro-call records are dropped: a fresh parse's records share
// nodes with the expression, so the checker's rewrites show in them, while
// a copy's records are separate and stay as parsed; with them, a rule's
// checked tree would differ by whether its text was parsed before. garm
// reads them for one thing only, which comprehensions are all() (all),
// taken here before they go. Nothing else reads them: CEL's checker, cost
// estimate and planner do not, and garm never unparses a rule.
func (e *Env) parsed(expression string) *parse {
	e.parseMu.Lock()
	p, ok := e.parses[expression]
	e.parseMu.Unlock()
	if ok {
		return p
	}
	p = &parse{}
	a, iss := e.base.Parse(expression)
	if iss.Err() != nil {
		p.err = fmt.Errorf("does not parse: %s", oneLine(iss.Err().Error()))
	} else if p.err = e.checkPrincipalNames(a.NativeRep().Expr()); p.err == nil {
		info := a.NativeRep().SourceInfo()
		for id, call := range info.MacroCalls() {
			if isAllCall(call) {
				if p.all == nil {
					p.all = map[int64]bool{}
				}
				p.all[id] = true
			}
			info.ClearMacroCall(id)
		}
		p.ast = a
	}
	e.parseMu.Lock()
	defer e.parseMu.Unlock()
	if first, ok := e.parses[expression]; ok {
		return first // another goroutine parsed it meanwhile: one parse serves both
	}
	if len(e.parses) < maxParses {
		e.parses[expression] = p
	}
	return p
}

// copyParse is a deep copy of p's tree and source information, for env to
// check.
func copyParse(env *cel.Env, p *parse) (*cel.Ast, error) {
	a, iss := copier.Optimize(env, p.ast)
	if iss.Err() != nil {
		return nil, fmt.Errorf("does not parse: %s", oneLine(iss.Err().Error()))
	}
	return a, nil
}

// ForgetParses drops the rule texts the Env keeps parsed. garmd calls it
// when a mount has compiled every rule, so a serving generation does not
// hold a parse of every rule beside its programs; a later Compile parses
// again.
func (e *Env) ForgetParses() {
	e.parseMu.Lock()
	defer e.parseMu.Unlock()
	clear(e.parses)
}

// Parsed is how many rule texts the Env keeps parsed.
func (e *Env) Parsed() int {
	e.parseMu.Lock()
	defer e.parseMu.Unlock()
	return len(e.parses)
}

// isAllCall reports whether a macro-call record is an all() call.
func isAllCall(call ast.Expr) bool {
	return call.Kind() == ast.CallKind && call.AsCall().FunctionName() == "all"
}
