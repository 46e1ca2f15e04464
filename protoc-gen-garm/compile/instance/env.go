package instance

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"cel.dev/cel-go/cel"
	"google.golang.org/protobuf/reflect/protoreflect"

	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

// MaxCost is the largest static worst-case cost a rule may have, in CEL's
// cost units (docs/decisions/0091-instance-rules-cost-is-bounded-at-build-not-metered-per-call.md).
const MaxCost = 20000

// DefaultMaxLen is the bound, in bytes, of an attribute's string (or list
// element) when its declaration gives no max_len. garmd's token reader
// leaves a longer value unbound.
const DefaultMaxLen = 256

// PrincipalMaxLen is the size the cost estimate assumes for principal.subject,
// principal.tenant, principal.agent and each compartment name. A longer
// value is still evaluated; the runtime cost limit still holds.
const PrincipalMaxLen = 256

// The principal's variables other than its attributes.
const (
	varSubject      = "principal.subject"
	varTenant       = "principal.tenant"
	varClearance    = "principal.clearance"
	varCompartments = "principal.compartments"
	varDelegated    = "principal.delegated"
	varAgent        = "principal.agent"
	attrPrefix      = "principal.attrs."
)

// Declarations is what a catalogue declares that rules may read.
type Declarations struct {
	// Attributes are the declared principal attributes; each becomes the
	// variable principal.attrs.<name> of its declared type. They are taken
	// as valid: package compile's lint judges declarations.
	Attributes []*toolv1.Attribute
	// Compartments is how many compartments the catalogue declares: the most
	// principal.compartments can hold, for the cost bound.
	Compartments int
}

// Target is what one rule is checked against: where it runs and the tool's
// own messages.
type Target struct {
	// Phase is RULE_PHASE_REQUIRE, RULE_PHASE_REVEAL or RULE_PHASE_FILTER.
	Phase planv1.RulePhase
	// Request is the tool's request message, the variable request.
	Request protoreflect.MessageDescriptor
	// Answer is the response message (the variable response) for a reveal
	// rule, or the filtered field's element message (the variable row) for a
	// filter; nil for a require rule.
	Answer protoreflect.MessageDescriptor
}

// Env is the CEL environment of one catalogue's declarations. It is safe for
// concurrent use; Compile caches one extended environment per Target, over
// one per file of the targets' messages (targetEnv).
type Env struct {
	base  *cel.Env
	attrs map[string]*toolv1.Attribute
	// attrIndex is each attribute's place in decl.Attributes, and in a
	// View's attribute values.
	attrIndex map[string]int
	decl      Declarations

	rules sync.Map // protoreflect.FieldDescriptor → *validate.FieldRules

	mu      sync.Mutex
	targets map[targetKey]*cel.Env
	// files are the base environment with the messages of a request's
	// file and of an answer's file registered, shared by every target
	// whose messages those files declare.
	files map[filesKey]*cel.Env
	// parses are the rule texts parsed, each once, for every target's
	// Compile to check a copy of (parsed); parseMu guards it.
	parseMu sync.Mutex
	parses  map[string]*parse
}

type targetKey struct {
	phase           planv1.RulePhase
	request, answer protoreflect.MessageDescriptor
}

// filesKey is the files whose messages an environment registers: the
// request's, and the answer's (nil for a require rule).
type filesKey struct {
	request, answer protoreflect.FileDescriptor
}

// NewEnv declares the principal's variables, one per declared attribute, and
// the CLEARANCE_* constants.
func NewEnv(d Declarations) (*Env, error) {
	opts := []cel.EnvOption{
		cel.EnableMacroCallTracking(),
		cel.Variable(varSubject, cel.StringType),
		cel.Variable(varTenant, cel.StringType),
		cel.Variable(varClearance, cel.IntType),
		cel.Variable(varCompartments, cel.ListType(cel.StringType)),
		cel.Variable(varDelegated, cel.BoolType),
		cel.Variable(varAgent, cel.StringType),
	}
	values := toolv1.Clearance_CLEARANCE_UNSPECIFIED.Descriptor().Values()
	for i := range values.Len() {
		v := values.Get(i)
		if v.Number() == 0 {
			continue
		}
		opts = append(opts, cel.Constant(string(v.Name()), cel.IntType, intVal(int64(v.Number()))))
	}
	attrs := make(map[string]*toolv1.Attribute, len(d.Attributes))
	attrIndex := make(map[string]int, len(d.Attributes))
	for i, a := range d.Attributes {
		t, err := attributeType(a)
		if err != nil {
			return nil, err
		}
		if _, dup := attrs[a.GetName()]; dup {
			return nil, fmt.Errorf("attribute %s is declared twice", a.GetName())
		}
		attrs[a.GetName()] = a
		attrIndex[a.GetName()] = i
		opts = append(opts, cel.Variable(attrPrefix+a.GetName(), t))
	}
	base, err := cel.NewEnv(opts...)
	if err != nil {
		return nil, fmt.Errorf("instance rules' environment: %w", err)
	}
	return &Env{base: base, attrs: attrs, attrIndex: attrIndex, decl: d, targets: map[targetKey]*cel.Env{}, files: map[filesKey]*cel.Env{}, parses: map[string]*parse{}}, nil
}

func attributeType(a *toolv1.Attribute) (*cel.Type, error) {
	switch a.GetType() {
	case toolv1.Attribute_TYPE_STRING:
		return cel.StringType, nil
	case toolv1.Attribute_TYPE_INT:
		return cel.IntType, nil
	case toolv1.Attribute_TYPE_BOOL:
		return cel.BoolType, nil
	case toolv1.Attribute_TYPE_STRING_LIST:
		return cel.ListType(cel.StringType), nil
	}
	return nil, fmt.Errorf("attribute %s has no type", a.GetName())
}

// answerVariable is the name the Answer message goes by in phase.
func answerVariable(phase planv1.RulePhase) (string, error) {
	switch phase {
	case planv1.RulePhase_RULE_PHASE_REQUIRE:
		return "", nil
	case planv1.RulePhase_RULE_PHASE_REVEAL:
		return "response", nil
	case planv1.RulePhase_RULE_PHASE_FILTER:
		return "row", nil
	}
	return "", errors.New("a rule needs a phase")
}

// targetEnv extends the base environment with request and the answer
// variable, typed as t's messages.
//
// Registering a file's messages with CEL describes every message of the
// file and of its imports, so it is done once per file (filesEnv), not
// once per tool: a package of a hundred tools declares them in one file,
// and the environment of each tool is that file's, plus its variables
// (extending an environment shares its registry until something is
// registered). The environment is the same either way: the same
// variables, over the same registered messages.
func (e *Env) targetEnv(t Target) (*cel.Env, error) {
	key := targetKey{t.Phase, t.Request, t.Answer}
	e.mu.Lock()
	defer e.mu.Unlock()
	if env, ok := e.targets[key]; ok {
		return env, nil
	}
	answer, err := answerVariable(t.Phase)
	if err != nil {
		return nil, err
	}
	if t.Request == nil {
		return nil, errors.New("a rule needs the tool's request message")
	}
	if (answer == "") != (t.Answer == nil) {
		return nil, fmt.Errorf("a %s rule needs exactly the answer message its phase reads", phaseWord(t.Phase))
	}
	files := filesKey{request: t.Request.ParentFile()}
	opts := []cel.EnvOption{
		cel.Variable("request", cel.ObjectType(string(t.Request.FullName()))),
	}
	if answer != "" {
		files.answer = t.Answer.ParentFile()
		opts = append(opts, cel.Variable(answer, cel.ObjectType(string(t.Answer.FullName()))))
	}
	filesEnv, err := e.filesEnv(files)
	if err == nil {
		var env *cel.Env
		if env, err = filesEnv.Extend(opts...); err == nil {
			e.targets[key] = env
			return env, nil
		}
	}
	return nil, fmt.Errorf("instance rules' environment for %s: %w", t.Request.FullName(), err)
}

// filesEnv is the base environment with the messages of key's files
// registered, built once per key; e.mu is held.
func (e *Env) filesEnv(key filesKey) (*cel.Env, error) {
	if env, ok := e.files[key]; ok {
		return env, nil
	}
	opts := []cel.EnvOption{cel.TypeDescs(key.request)}
	if key.answer != nil {
		opts = append(opts, cel.TypeDescs(key.answer))
	}
	env, err := e.base.Extend(opts...)
	if err != nil {
		return nil, err
	}
	e.files[key] = env
	return env, nil
}

func phaseWord(p planv1.RulePhase) string {
	return strings.ToLower(strings.TrimPrefix(p.String(), "RULE_PHASE_"))
}

// principalVariables lists the principal's variable names, sorted, for
// messages that say what may be read.
func (e *Env) principalVariables() []string {
	names := []string{varSubject, varTenant, varClearance, varCompartments, varDelegated, varAgent}
	for n := range e.attrs {
		names = append(names, attrPrefix+n)
	}
	slices.Sort(names)
	return names
}
