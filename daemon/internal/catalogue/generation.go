package catalogue

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"buf.build/go/protovalidate"
	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/chain/card"
	"github.com/garm-dev/garm/daemon/internal/chain/instance"
	"github.com/garm-dev/garm/daemon/internal/chain/limit"
	cataloguev1 "github.com/garm-dev/garm/gen/garm/catalogue/v1"
	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/protoc-gen-garm/compile"
	celrule "github.com/garm-dev/garm/protoc-gen-garm/compile/instance"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Options bound what a load accepts.
type Options struct {
	// MaxTools refuses a catalogue with more tools; 0 sets no limit
	// (garmd's --max-tools).
	MaxTools int
	// Checked holds the keys of descriptor files a process of this
	// executable built and checked before, from garmd's check cache
	// (--check-cache): a load builds those files from their bytes without
	// checking them again (artifact.ReadCheckedToServe). Nil checks every
	// file.
	Checked *artifact.Checked
	// Validated holds the keys of descriptor files whose tool inputs'
	// validation rules an earlier mount of this executable compiled, from
	// the same cache: Mount compiles a shard of such inputs on each input's
	// first validation rather than at once (docs/decisions/0148). Nil
	// compiles every input at mount.
	Validated *artifact.Checked
}

// Generation is one loaded catalogue: every tool as the chain uses it,
// computed once. A Generation is never changed after Mount accepts it, so
// any number of calls may read it at once.
type Generation struct {
	// Digest is "sha256:" and the hex SHA-256 of the artifact's bytes.
	Digest string
	// Size is the artifact's length in bytes.
	Size int
	// Producer is the provenance's producer, e.g. "garm-catalogue/v0.3.0".
	Producer string
	// SchemaVersion is the annotation schema version the artifact was
	// written for.
	SchemaVersion uint32
	// Catalogue is the artifact as read — taxonomy with descriptions,
	// provenance, descriptor hashes, plans — less its descriptor set and
	// field docs, released once loaded (descriptors are read from Tools,
	// docs from the plans' schema descriptions). Read-only, like
	// everything a generation holds.
	Catalogue *cataloguev1.Catalogue

	// Tools are every tool, sorted by FQN; Tools[i].Index is i.
	Tools []*call.Tool
	// Compartments are the declared compartment names, sorted: bit i of a
	// call.Compartments numbered by this generation is Compartments[i].
	Compartments []string
	// ToolSets are the declared tool-set names, sorted.
	ToolSets []string
	// Attributes are the declared principal attributes, by name: the only
	// ones a token's garm.attrs binds and an instance rule reads.
	Attributes map[string]*toolv1.Attribute
	// Signed is what the catalogue's signatures vouch for, set by garmd
	// before the generation is served when it verifies signatures
	// (--catalogue-keys); nil when it verifies none.
	Signed *Signed

	routes    map[string]*call.Tool
	bits      map[string]call.Compartments
	validator protovalidate.Validator
	// built is what this generation's artifact was built into and checked
	// as, keyed for the next reload to reuse (Reload).
	built *artifact.Built
	// reusedFiles and reusedPlans count the descriptor files and package
	// plans a Reload took from the generation serving, fromChecked the
	// files built from keys Options.Checked held.
	reusedFiles, reusedPlans, fromChecked int
	// servingValidator is the serving generation's validator, from Reload
	// to Mount, which takes the shards it can reuse and forgets it.
	servingValidator *shardedValidator
	// rules are the compiled instance rules, from Mount; servingRules are
	// the serving generation's, from Reload to Mount, which takes the
	// programs it can reuse and forgets them.
	rules, servingRules *instance.Rules
	// limits are the compiled limits, from Mount.
	limits *limit.Limits
	// validated is Options.Validated, from Load to Mount, which forgets
	// it.
	validated *artifact.Checked
}

// Signed is what a signed catalogue's verified signatures vouch for
// (catalogue-builder/signature's statement, less the digest, which is the
// generation's own).
type Signed struct {
	// Catalogue is the name the catalogue was signed under.
	Catalogue string
	// Version is its signed version number.
	Version uint64
	// SignedAt is when its first signer signed.
	SignedAt time.Time
	// Signers are the distinct keys whose signatures verified, sorted by
	// key id.
	Signers []Signer
}

// Signer is one key that signed a catalogue.
type Signer struct {
	KeyID string
	// Group is the key's group in the catalogue key set, or "".
	Group string
}

// Load reads and checks an artifact's bytes (artifact.ReadToServe) and
// builds the generation they describe. It refuses, with a sentence naming what is
// wrong, everything artifact.Read refuses, a catalogue with no tool, and
// one with more tools than o.MaxTools when that is positive.
func Load(data []byte, o Options) (*Generation, error) {
	return Reload(data, o, nil)
}

// Reload is Load for a reload: what data holds byte for byte as the
// serving generation's artifact did — a descriptor file whose imports are
// reused the same way, a package plan, the field docs — is taken from
// serving instead of being decoded, built and checked again, and so is the
// tool model of a package of those very files (artifact.ReloadToServe).
// The digests prove the results are the ones this process already built
// and checked; every other check runs as Load runs it, and it accepts and
// refuses exactly what Load does. serving must be the generation being served (a
// Serving's), never a candidate that was refused or not yet mounted; nil
// reuses nothing. serving is read, never changed, and the generation
// returned does not keep it; until it is mounted it keeps serving's
// validator, whose shards over inputs it reused Mount takes instead of
// compiling them again. A file neither reused nor checked is built from
// o.Checked's keys when they hold its own (Options.Checked).
func Reload(data []byte, o Options, serving *Generation) (*Generation, error) {
	var reuse *artifact.Built
	if serving != nil {
		reuse = serving.built
	}
	a, err := artifact.ReadCheckedToServe(data, reuse, o.Checked)
	if err != nil {
		return nil, refused(data, err)
	}
	tools := a.Tools()
	switch {
	case len(tools) == 0:
		return nil, &LoadError{Digest: a.Digest, Reason: "it declares no tool; garmd serves a catalogue with at least one"}
	case o.MaxTools > 0 && len(tools) > o.MaxTools:
		return nil, &LoadError{Digest: a.Digest, Reason: fmt.Sprintf("it declares %d tools, more than the %d this garmd allows (--max-tools)", len(tools), o.MaxTools)}
	}
	g, err := build(a, tools)
	if err != nil {
		return nil, &LoadError{Digest: a.Digest, Reason: err.Error(), Err: err}
	}
	if serving != nil {
		g.servingValidator, _ = serving.validator.(*shardedValidator)
		g.servingRules = serving.rules
	}
	g.validated = o.Validated
	return g, nil
}

// LoadFile loads the artifact at path, refusing a file larger than
// artifact.MaxSize before reading it (artifact.ReadFileData).
func LoadFile(path string, o Options) (*Generation, error) {
	data, err := artifact.ReadFileData(path)
	if err != nil {
		return nil, fmt.Errorf("refusing catalogue file: %w", err)
	}
	g, err := Load(data, o)
	if err != nil {
		return nil, fmt.Errorf("catalogue file %s: %w", path, err)
	}
	return g, nil
}

// LoadError is a refused load. Its message is one sentence for the
// operator; Err, when set, is the reader's own error (an
// *artifact.VersionError, for one).
type LoadError struct {
	// Digest is the refused artifact's, when its size allowed computing it.
	Digest string
	Reason string
	Err    error
}

func (e *LoadError) Error() string {
	if e.Digest == "" {
		return "refusing catalogue: " + e.Reason
	}
	return "refusing catalogue " + e.Digest + ": " + e.Reason
}

func (e *LoadError) Unwrap() error { return e.Err }

// refused turns artifact.Read's refusal into garmd's sentence.
func refused(data []byte, err error) error {
	e := &LoadError{Reason: err.Error(), Err: err}
	if len(data) <= artifact.MaxSize {
		e.Digest = artifact.Digest(data)
	}
	if v := (*artifact.VersionError)(nil); errors.As(err, &v) {
		e.Reason = fmt.Sprintf("it was written for annotation schema version %d and this build of garmd reads %d: upgrade garmd before adopting it", v.Version, artifact.SchemaVersion)
	}
	return e
}

// build computes everything a call needs from a checked artifact.
func build(a *artifact.Artifact, tools []*compile.Tool) (*Generation, error) {
	c := a.Catalogue
	g := &Generation{
		Digest:        a.Digest,
		Size:          a.Size,
		Producer:      c.GetProvenance().GetProducer(),
		SchemaVersion: c.GetAnnotationSchemaVersion(),
		Tools:         make([]*call.Tool, 0, len(tools)),
		routes:        make(map[string]*call.Tool, len(tools)),
	}
	for _, d := range c.GetCompartments() {
		g.Compartments = append(g.Compartments, d.GetName())
	}
	slices.Sort(g.Compartments)
	g.Compartments = slices.Compact(g.Compartments)
	if len(g.Compartments) > compile.MaxCompartments {
		return nil, fmt.Errorf("it declares %d compartments; at most %d can be numbered", len(g.Compartments), compile.MaxCompartments)
	}
	g.bits = make(map[string]call.Compartments, len(g.Compartments))
	for i, name := range g.Compartments {
		g.bits[name] = 1 << i
	}
	for _, d := range c.GetToolSets() {
		g.ToolSets = append(g.ToolSets, d.GetName())
	}
	slices.Sort(g.ToolSets)
	g.ToolSets = slices.Compact(g.ToolSets)
	g.readAttributes(c.GetAttributes())

	rules := &ruleNumbering{g: g, memo: map[string]call.Compartments{}, plans: make(map[*planv1.MessagePlan][]call.Compartments, 2*len(tools))}
	cards := cardReach{}
	for _, t := range tools {
		ct, err := g.newTool(a, t, rules, cards)
		if err != nil {
			return nil, err
		}
		g.Tools = append(g.Tools, ct)
	}
	slices.SortFunc(g.Tools, func(x, y *call.Tool) int { return cmp.Compare(x.FQN, y.FQN) })
	for i, t := range g.Tools {
		t.Index = i
		if i > 0 && g.Tools[i-1].FQN == t.FQN {
			return nil, fmt.Errorf("two tools are named %s", t.FQN)
		}
		if other := g.routes[t.Method]; other != nil {
			return nil, fmt.Errorf("tools %s and %s share the route %s", other.FQN, t.FQN, t.Method)
		}
		g.routes[t.Method] = t
	}
	// The descriptors live in the artifact's registry, and each field's doc
	// is already its schema fragment's description: ReadToServe kept
	// neither the descriptor set nor field_docs.
	g.Catalogue = c
	g.built, g.reusedFiles, g.reusedPlans, g.fromChecked = a.Built, a.Reused, a.ReusedPlans, a.FromChecked
	return g, nil
}

func (g *Generation) newTool(a *artifact.Artifact, t *compile.Tool, rules *ruleNumbering, cards cardReach) (*call.Tool, error) {
	pkg := string(t.Desc.ParentFile().Package())
	in, out := t.Desc.Input(), t.Desc.Output()
	ct := &call.Tool{
		FQN:            t.FQN,
		Name:           t.Name,
		Package:        pkg,
		Service:        string(t.Service.Desc.FullName()),
		Method:         t.Method,
		Subject:        t.Subject,
		Verb:           t.Policy.GetVerb(),
		MinClearance:   t.Policy.GetMinClearance(),
		Sets:           sortedUnique(t.Policy.GetSets()),
		Policy:         t.Policy,
		Input:          in,
		Output:         out,
		InputPlan:      a.Plan(pkg, string(in.FullName())),
		OutputPlan:     a.Plan(pkg, string(out.FullName())),
		DescriptorHash: a.Catalogue.GetDescriptorHashes()[pkg],
	}
	if ct.InputPlan == nil || ct.OutputPlan == nil {
		return nil, fmt.Errorf("tool %s has no plan for its input or output", t.FQN)
	}
	var err error
	ct.CompartmentNames = sortedUnique(t.Policy.GetCompartments())
	if ct.Compartments, err = g.number(ct.CompartmentNames); err != nil {
		return nil, fmt.Errorf("tool %s: %w", t.FQN, err)
	}
	if ct.InputRuleCompartments, err = rules.of(ct.InputPlan); err != nil {
		return nil, fmt.Errorf("tool %s: %w", t.FQN, err)
	}
	if ct.OutputRuleCompartments, err = rules.of(ct.OutputPlan); err != nil {
		return nil, fmt.Errorf("tool %s: %w", t.FQN, err)
	}
	if err = g.readCards(ct, cards); err != nil {
		return nil, fmt.Errorf("tool %s: %w", t.FQN, err)
	}
	return ct, nil
}

// readCards fills t's card fields: whether its answer can hold a card,
// which of its message types lead to one, and design 7.8's floor — its gate
// joined with its output message's default read policy. A default policy
// naming an undeclared compartment is refused like any other undeclared
// name. Only a tool that can answer with a card has any of this: reading
// the options of every output would cost every load for the few tools that
// use it.
func (g *Generation) readCards(t *call.Tool, cards cardReach) error {
	t.CardFloor = call.Label{Clearance: t.MinClearance, Compartments: t.Compartments}
	if _, t.AnswersCards = cards.reachesCard(t.Output); !t.AnswersCards {
		return nil
	}
	t.CardHolders = card.Holders(t.Output)
	def, err := compile.DefaultFieldPolicyOf(t.Output)
	if err != nil || def == nil {
		return err
	}
	comps, err := g.number(def.GetCompartments())
	if err != nil {
		return fmt.Errorf("%s's default policy: %w", t.Output.FullName(), err)
	}
	t.CardFloor = t.CardFloor.Tighter(call.Label{Clearance: def.GetRead(), Compartments: comps})
	return nil
}

// ruleNumbering numbers the compartments of plan rules, sharing the result
// between tools that use one plan twice (a message that is both an input
// and an output) and between rules naming the same list.
type ruleNumbering struct {
	g     *Generation
	memo  map[string]call.Compartments
	plans map[*planv1.MessagePlan][]call.Compartments
}

func (r *ruleNumbering) of(plan *planv1.MessagePlan) ([]call.Compartments, error) {
	if got, ok := r.plans[plan]; ok {
		return got, nil
	}
	out := make([]call.Compartments, len(plan.GetRules()))
	for i, rule := range plan.GetRules() {
		// A plan a reload took from the serving generation was shared
		// already, and is read by calls being served: it is not written.
		if rule.OnDeny != bareOmit && isBareOmit(rule.GetOnDeny()) {
			rule.OnDeny = bareOmit
		}
		names := rule.GetCompartments()
		if len(names) == 0 {
			continue
		}
		key := strings.Join(names, "\x00")
		set, ok := r.memo[key]
		if !ok {
			var err error
			if set, err = r.g.number(names); err != nil {
				return nil, fmt.Errorf("%s field %s: %w", plan.GetMessage(), rule.GetPath(), err)
			}
			r.memo[key] = set
		}
		out[i] = set
	}
	if r.plans == nil {
		r.plans = map[*planv1.MessagePlan][]call.Compartments{}
	}
	r.plans[plan] = out
	return out, nil
}

// bareOmit is the one omit redaction every generation's plans share. Most
// rules of a catalogue resolve to omit, and each arrives as two messages of
// its own; plans are never changed once loaded, so equal ones are shared.
var bareOmit = &toolv1.Redaction{Kind: &toolv1.Redaction_Omit_{Omit: &toolv1.Redaction_Omit{}}}

// isBareOmit reports whether r is an omit redaction and nothing else.
func isBareOmit(r *toolv1.Redaction) bool {
	omit := r.GetOmit()
	return omit != nil && len(r.ProtoReflect().GetUnknown()) == 0 && len(omit.ProtoReflect().GetUnknown()) == 0
}

// number is the set of names, every one of which must be declared.
func (g *Generation) number(names []string) (call.Compartments, error) {
	var set call.Compartments
	for _, n := range names {
		bit, ok := g.bits[n]
		if !ok {
			return 0, fmt.Errorf("compartment %q is not declared", n)
		}
		set |= bit
	}
	return set, nil
}

// readAttributes indexes the declared attributes by name. artifact.Read has
// already refused a declaration the build refuses (compile.AttributeProblem,
// a name declared twice): one check, the build's, in this process.
func (g *Generation) readAttributes(decls []*toolv1.Attribute) {
	if len(decls) == 0 {
		return
	}
	g.Attributes = make(map[string]*toolv1.Attribute, len(decls))
	for _, d := range decls {
		g.Attributes[d.GetName()] = d
	}
}

// DeclaredAttribute is the declaration of the attribute name, or nil when
// this generation declares none by that name.
func (g *Generation) DeclaredAttribute(name string) *toolv1.Attribute { return g.Attributes[name] }

// FileKeys are the keys of the descriptor files this generation was built
// from, each built and checked by this process or vouched for by the keys
// it was given, for garmd's check cache to record once it is mounted.
func (g *Generation) FileKeys() []artifact.FileKey { return g.built.FileKeys() }

// ValidatedKeys are the keys of the descriptor files declaring the tools'
// inputs, whose validation rules a mount of this generation compiled or
// found vouched for, sorted, for garmd's check cache to record. Only a
// mounted generation has them.
func (g *Generation) ValidatedKeys() []artifact.FileKey {
	if g.validator == nil {
		return nil
	}
	keys := make([]artifact.FileKey, 0, len(g.Tools))
	for _, t := range g.Tools {
		if key, ok := g.built.KeyOf(t.Input.ParentFile().Path()); ok {
			keys = append(keys, key)
		}
	}
	return artifact.SortedKeys(keys)
}

// vouched reports whether the check cache vouches that md's validation
// rules compiled in an earlier mount; nil when it vouches for nothing.
func (g *Generation) vouched() func(protoreflect.MessageDescriptor) bool {
	validated, built := g.validated, g.built
	if validated.Len() == 0 {
		return nil
	}
	return func(md protoreflect.MessageDescriptor) bool {
		key, ok := built.KeyOf(md.ParentFile().Path())
		return ok && validated.Has(key)
	}
}

// FromChecked counts the descriptor files built from the check cache's
// keys rather than checked again (Options.Checked).
func (g *Generation) FromChecked() int { return g.fromChecked }

// Rules are the generation's compiled instance rules (chain steps 4 and
// 7), from Mount; nil before.
func (g *Generation) Rules() *instance.Rules { return g.rules }

// Limits are the generation's compiled limits (limit.Compile); Of answers
// nil for a tool with none.
func (g *Generation) Limits() *limit.Limits { return g.limits }

// PrincipalView is p as this generation's instance rules read it, or nil
// when no tool of the generation has a rule.
func (g *Generation) PrincipalView(p *call.Principal) *celrule.View {
	if g.rules.Carrying() == 0 {
		return nil
	}
	return g.rules.View(p)
}

// Route is the tool served at method ("/<package>.<Service>/<Method>"), or
// nil when there is none.
func (g *Generation) Route(method string) *call.Tool { return g.routes[method] }

// CompartmentSet numbers names by this generation. kept are the declared
// names, sorted and once each; dropped are the names this generation does
// not declare, sorted and once each, for the caller to log.
func (g *Generation) CompartmentSet(names []string) (set call.Compartments, kept, dropped []string) {
	for _, n := range sortedUnique(names) {
		if bit, ok := g.bits[n]; ok {
			set |= bit
			kept = append(kept, n)
		} else {
			dropped = append(dropped, n)
		}
	}
	return set, kept, dropped
}

// Numbered numbers names by this generation; ok is false when one of them
// is not declared.
func (g *Generation) Numbered(names []string) (set call.Compartments, ok bool) {
	set, err := g.number(names)
	return set, err == nil
}

// CompartmentNames are the names of set's bits, sorted. Bits this
// generation does not number are ignored.
func (g *Generation) CompartmentNames(set call.Compartments) []string {
	var out []string
	for i, name := range g.Compartments {
		if set&(1<<i) != 0 {
			out = append(out, name)
		}
	}
	return out
}

func sortedUnique(names []string) []string {
	if len(names) == 0 {
		return nil
	}
	return slices.Compact(slices.Sorted(slices.Values(names)))
}
