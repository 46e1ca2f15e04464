package instance

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/operators"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"google.golang.org/protobuf/reflect/protoreflect"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

func intVal(v int64) ref.Val { return types.Int(v) }

// Program is one compiled rule: checked, bounded and planned. It is
// immutable and safe for concurrent use.
type Program struct {
	prg          cel.Program
	checked      *cel.Ast
	env          *cel.Env
	adapter      types.Adapter
	envAttrs     map[string]*toolv1.Attribute
	answer       string
	reads        []string
	compartments []string
	allOver      []string
	tested       []string
	cost         uint64
}

// Reads is the variables and field paths the rule reads, sorted and
// distinct ("principal.attrs.accounts", "request.account_id", "row.owner");
// a path through a repeated field names the element's fields directly
// ("request.items.owner").
func (p *Program) Reads() []string { return p.reads }

// CostBound is CEL's static worst-case cost of one evaluation.
func (p *Program) CostBound() uint64 { return p.cost }

// Compartments is the compartment names the rule tests membership of
// ('x' in principal.compartments), sorted and distinct.
func (p *Program) Compartments() []string { return p.compartments }

// AllOver is the paths of the lists the rule quantifies with all(), sorted
// and distinct: all() over an empty list holds.
func (p *Program) AllOver() []string { return p.allOver }

// Tested is the paths the rule tests with has() (has(request.item)), sorted
// and distinct.
func (p *Program) Tested() []string { return p.tested }

// Compile parses and checks expression against t, bounds its cost and plans
// it. Its errors are for the rule's author: they name the rule's own text and
// declarations, never a value.
func (e *Env) Compile(t Target, expression string) (*Program, error) {
	env, err := e.targetEnv(t)
	if err != nil {
		return nil, err
	}
	pr := e.parsed(expression)
	if pr.err != nil {
		return nil, pr.err
	}
	parsed, err := copyParse(env, pr)
	if err != nil {
		return nil, err
	}
	return e.program(t, env, parsed, pr.all)
}

// program checks parsed, a tree of its own, in env, the environment of t,
// bounds its cost and plans it; all is the IDs of the comprehensions all()
// expanded to.
func (e *Env) program(t Target, env *cel.Env, parsed *cel.Ast, all map[int64]bool) (*Program, error) {
	checked, iss := env.Check(parsed)
	if iss.Err() != nil {
		return nil, fmt.Errorf("does not type-check: %s", checkErrors(iss))
	}
	if !checked.OutputType().IsExactType(cel.BoolType) {
		return nil, fmt.Errorf("returns %s, not bool", checked.OutputType())
	}
	answer, _ := answerVariable(t.Phase)
	p := &Program{checked: checked, env: env, adapter: env.CELTypeAdapter(), envAttrs: e.attrs, answer: answer}
	w := &walker{reads: map[string]bool{}, compartments: map[string]bool{}, allOver: map[string]bool{}, tested: map[string]bool{}, all: all}
	w.visit(checked.NativeRep().Expr(), nil)
	p.reads, p.compartments, p.allOver, p.tested = sortedKeys(w.reads), sortedKeys(w.compartments), sortedKeys(w.allOver), sortedKeys(w.tested)

	est := &estimator{env: e, target: t, unbounded: map[string]string{}}
	cost, err := env.EstimateCost(checked, est)
	if err != nil {
		return nil, fmt.Errorf("cost cannot be estimated: %s", oneLine(err.Error()))
	}
	if cost.Max == math.MaxUint64 || len(est.unbounded) > 0 && cost.Max > MaxCost {
		return nil, &CostError{"its worst-case cost is unbounded: " + est.hints()}
	}
	if cost.Max > MaxCost {
		return nil, &CostError{fmt.Sprintf("its worst-case cost %d is above the limit %d: lower the declared sizes it reads (%s)", cost.Max, MaxCost, strings.Join(p.reads, ", "))}
	}
	p.cost = cost.Max
	if p.prg, err = env.Program(checked); err != nil {
		return nil, fmt.Errorf("cannot be planned: %s", oneLine(err.Error()))
	}
	return p, nil
}

// CostError is Compile's refusal of a rule whose worst-case cost is
// unbounded or above MaxCost; its message says what to bound.
type CostError struct{ Message string }

func (e *CostError) Error() string { return e.Message }

// checkErrors is the checker's findings as "message (column n)", without
// the echo of the source CEL appends.
func checkErrors(iss *cel.Issues) string {
	var parts []string
	for _, e := range iss.Errors() {
		parts = append(parts, fmt.Sprintf("%s (column %d)", e.Message, e.Location.Column()+1))
	}
	return strings.Join(parts, "; ")
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// qualifiedName is the dotted name of a chain of field selections from an
// identifier (principal.attrs.x), or "" when e is not one.
func qualifiedName(e ast.Expr) string {
	switch e.Kind() {
	case ast.IdentKind:
		return e.AsIdent()
	case ast.SelectKind:
		s := e.AsSelect()
		if s.IsTestOnly() {
			return ""
		}
		if q := qualifiedName(s.Operand()); q != "" {
			return q + "." + s.FieldName()
		}
	}
	return ""
}

// checkPrincipalNames refuses, before the checker sees it, every reference
// to principal that is not one of its variables, naming it in the words of
// the declarations (CEL's own "undeclared reference" names the wrong thing),
// and every has() over principal: an absent value already fails the rule,
// and "allow when missing" must not be expressible.
func (e *Env) checkPrincipalNames(root ast.Expr) error {
	var bad error
	ast.PostOrderVisit(root, ast.NewExprVisitor(func(x ast.Expr) {
		if bad != nil {
			return
		}
		switch x.Kind() {
		case ast.SelectKind:
			s := x.AsSelect()
			if s.IsTestOnly() {
				if q := qualifiedName(s.Operand()); q == "principal" || strings.HasPrefix(q, "principal.") {
					bad = fmt.Errorf("has() over %s.%s is refused: a rule reading an absent value already fails", q, s.FieldName())
				}
				return
			}
			bad = e.checkPrincipalName(qualifiedName(x))
		case ast.IdentKind:
			bad = e.checkPrincipalName(x.AsIdent())
		}
	}))
	return bad
}

func (e *Env) checkPrincipalName(q string) error {
	if q != "principal" && !strings.HasPrefix(q, "principal.") {
		return nil
	}
	parts := strings.Split(q, ".")
	for i := len(parts); i > 0; i-- {
		if e.isPrincipalVariable(strings.Join(parts[:i], ".")) {
			return nil // a variable, or a selection on one for the checker to judge
		}
	}
	switch {
	case len(parts) >= 3 && parts[1] == "attrs":
		return fmt.Errorf("%s is not a declared attribute", strings.Join(parts[:3], "."))
	case q == "principal" || q == "principal.attrs":
		// A prefix seen on the way to a full name; the full name is judged.
		return nil
	}
	return fmt.Errorf("principal.%s is not a principal variable (%s)", parts[1], strings.Join(e.principalVariables(), ", "))
}

func (e *Env) isPrincipalVariable(q string) bool {
	switch q {
	case varSubject, varTenant, varClearance, varCompartments, varDelegated, varAgent:
		return true
	}
	_, ok := e.attrs[strings.TrimPrefix(q, attrPrefix)]
	return ok && strings.HasPrefix(q, attrPrefix)
}

// walker collects, from a checked AST, the paths a rule reads, the
// compartments it tests and the lists it quantifies with all().
type walker struct {
	reads, compartments, allOver, tested map[string]bool
	// all is the IDs of the comprehensions all() expanded to (parse.all).
	all map[int64]bool
}

// path is the read path e denotes (a variable, a field of one, an element
// of a list), or "" when e computes something else.
func (w *walker) path(e ast.Expr, locals map[string]string) string {
	switch e.Kind() {
	case ast.IdentKind:
		n := e.AsIdent()
		if p, ok := locals[n]; ok {
			return p
		}
		if n == "request" || n == "response" || n == "row" || strings.HasPrefix(n, "principal.") {
			return n
		}
	case ast.SelectKind:
		s := e.AsSelect()
		if p := w.path(s.Operand(), locals); p != "" {
			return p + "." + s.FieldName()
		}
	case ast.CallKind:
		c := e.AsCall()
		if c.FunctionName() == operators.Index && len(c.Args()) == 2 {
			if p := w.path(c.Args()[0], locals); p != "" {
				w.visit(c.Args()[1], locals)
				return p
			}
		}
	}
	return ""
}

func (w *walker) visit(e ast.Expr, locals map[string]string) {
	if p := w.path(e, locals); p != "" {
		w.reads[p] = true
		if e.Kind() == ast.SelectKind && e.AsSelect().IsTestOnly() {
			w.tested[p] = true
		}
		return
	}
	switch e.Kind() {
	case ast.SelectKind:
		w.visit(e.AsSelect().Operand(), locals)
	case ast.CallKind:
		c := e.AsCall()
		if c.FunctionName() == operators.In && len(c.Args()) == 2 && c.Args()[0].Kind() == ast.LiteralKind {
			if s, ok := c.Args()[0].AsLiteral().(types.String); ok && w.path(c.Args()[1], locals) == varCompartments {
				w.compartments[string(s)] = true
			}
		}
		if c.IsMemberFunction() {
			w.visit(c.Target(), locals)
		}
		for _, a := range c.Args() {
			w.visit(a, locals)
		}
	case ast.ListKind:
		for _, x := range e.AsList().Elements() {
			w.visit(x, locals)
		}
	case ast.MapKind:
		for _, en := range e.AsMap().Entries() {
			m := en.AsMapEntry()
			w.visit(m.Key(), locals)
			w.visit(m.Value(), locals)
		}
	case ast.StructKind:
		for _, f := range e.AsStruct().Fields() {
			w.visit(f.AsStructField().Value(), locals)
		}
	case ast.ComprehensionKind:
		c := e.AsComprehension()
		rng := w.path(c.IterRange(), locals)
		w.visit(c.IterRange(), locals)
		if w.all[e.ID()] && rng != "" {
			w.allOver[rng] = true
		}
		inner := make(map[string]string, len(locals)+2)
		for k, v := range locals {
			inner[k] = v
		}
		inner[c.IterVar()] = rng
		if c.HasIterVar2() {
			inner[c.IterVar2()] = rng
		}
		delete(inner, c.AccuVar())
		w.visit(c.AccuInit(), locals)
		w.visit(c.LoopCondition(), inner)
		w.visit(c.LoopStep(), inner)
		w.visit(c.Result(), inner)
	}
}

func protoNumber(c toolv1.Clearance) protoreflect.EnumNumber { return c.Number() }
