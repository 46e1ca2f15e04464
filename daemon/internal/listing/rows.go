package listing

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/garm-dev/garm/daemon/internal/cache"
	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/fieldpath"
	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/protoc-gen-garm/compile"
)

// generationCache is what one generation's listings reuse: the body's
// prefix, each tool's row head (made on first listing), and the schemas
// assembled per caller shape. Forgetting a generation forgets its shapes.
type generationCache struct {
	g      *catalogue.Generation
	prefix []byte
	rows   []atomic.Pointer[row]
	shapes *cache.Map[call.Shape, *shapeCache]
	// sizeHint is the largest body listed for any shape of this
	// generation, so a shape's first body is allocated once too.
	sizeHint atomic.Int64
}

// row is the part of a tool's entry that is the same for every caller.
type row struct {
	// head is the entry's JSON up to the input schema's value:
	// `{"fqn":…,"guidance":{…},"input_schema":`. delegated is the head a
	// delegated caller is shown: the same bytes unless a limit is keyed
	// on the agent.
	head, delegated []byte
	// audiences has bit a set for each audience a the tool admits.
	audiences uint8
}

// shapeCache holds one caller shape's schemas within one generation, by
// tool index, each assembled on first listing.
type shapeCache struct {
	schemas []atomic.Pointer[[]byte]
	// sizeHint is the largest body listed for this shape, so the next one
	// is allocated once.
	sizeHint atomic.Int64
}

func newGenerationCache(g *catalogue.Generation, shapes int) *generationCache {
	digest, _ := json.Marshal(g.Digest)
	prefix := append([]byte(`{"catalogue_digest":`), digest...)
	if g.Signed != nil {
		// The signed version, so a caller sees which signed policy
		// answered (issue 36 §2).
		prefix = append(prefix, `,"catalogue_version":`...)
		prefix = strconv.AppendUint(prefix, g.Signed.Version, 10)
	}
	return &generationCache{
		g:      g,
		prefix: append(prefix, `,"tools":[`...),
		rows:   make([]atomic.Pointer[row], len(g.Tools)),
		shapes: cache.New[call.Shape, *shapeCache](shapes),
	}
}

// shape is s's schemas, made empty on first use.
func (gc *generationCache) shape(s call.Shape) *shapeCache {
	if sc, ok := gc.shapes.Get(s); ok {
		return sc
	}
	return gc.shapes.Put(s, &shapeCache{schemas: make([]atomic.Pointer[[]byte], len(gc.g.Tools))})
}

// row is tool i's row, made once.
func (gc *generationCache) row(i int) (*row, error) {
	if r := gc.rows[i].Load(); r != nil {
		return r, nil
	}
	r, err := newRow(gc.g, gc.g.Tools[i])
	if err != nil {
		return nil, err
	}
	gc.rows[i].CompareAndSwap(nil, r)
	return gc.rows[i].Load(), nil
}

// schema is t's input schema for shape, assembled once.
func (sc *shapeCache) schema(t *call.Tool, shape call.Shape, assembled *atomic.Uint64) ([]byte, error) {
	if t.Index < 0 || t.Index >= len(sc.schemas) {
		return nil, fmt.Errorf("listing: tool %s is not of the generation being listed", t.FQN)
	}
	slot := &sc.schemas[t.Index]
	if s := slot.Load(); s != nil {
		return *s, nil
	}
	s, err := InputSchema(t, shape)
	if err != nil {
		return nil, err
	}
	assembled.Add(1)
	slot.CompareAndSwap(nil, &s)
	return *slot.Load(), nil
}

// InputSchema is t's input schema as a caller of shape is shown it: the
// rules the caller may write (clearance and compartments), less any the
// runner supplies, each denied message field taking its subtree with it.
func InputSchema(t *call.Tool, shape call.Shape) ([]byte, error) {
	rules := t.InputPlan.GetRules()
	if len(t.InputRuleCompartments) != len(rules) {
		return nil, fmt.Errorf("listing: tool %s has %d input rules and %d rule compartment sets", t.FQN, len(rules), len(t.InputRuleCompartments))
	}
	// The write check's own test (step 3a), so the schema shows exactly
	// what the caller may send, and step 3b lists violations by it.
	s, err := compile.AssembleSchemaByIndex(t.InputPlan, func(i int, r *planv1.FieldRule) bool {
		return fieldpath.Shown(shape, t.InputRuleCompartments, i, r)
	})
	if err != nil {
		return nil, fmt.Errorf("listing: tool %s: %w", t.FQN, err)
	}
	return s, nil
}

// rowHead is a row's caller-independent fields, in the order design 7.6
// writes them; input_schema follows.
type rowHead struct {
	FQN            string   `json:"fqn"`
	Method         string   `json:"method"`
	Title          string   `json:"title"`
	Description    string   `json:"description"`
	Verb           string   `json:"verb"`
	Sets           []string `json:"sets"`
	Audience       []string `json:"audience"`
	ApprovalMode   string   `json:"approval_mode"`
	MaterialFields []string `json:"material_fields"`
	// DistinctApprover is four eyes: the grant's approver must not be
	// a party to the call.
	DistinctApprover bool     `json:"distinct_approver"`
	Guidance         guidance `json:"guidance"`
	// Rules are the tool's instance rules, never their expressions.
	Rules []Rule `json:"rules"`
	// Limits are the tool's limits that apply to the caller; absent when
	// none does.
	Limits []Limit `json:"limits,omitempty"`
}

type guidance struct {
	WhenToUse    string `json:"when_to_use"`
	WhenNotToUse string `json:"when_not_to_use"`
	OnError      string `json:"on_error"`
}

func newRow(g *catalogue.Generation, t *call.Tool) (*row, error) {
	p := t.Policy
	head := rowHead{
		FQN:              t.FQN,
		Method:           t.Method,
		Title:            p.GetTitle(),
		Description:      p.GetDescription(),
		Verb:             t.Verb.String(),
		Sets:             nonNil(t.Sets),
		Audience:         []string{},
		ApprovalMode:     p.GetApproval().GetMode().String(),
		MaterialFields:   nonNil(p.GetApproval().GetMaterialFields()),
		DistinctApprover: p.GetApproval().GetDistinctApprover(),
		Guidance: guidance{
			WhenToUse:    p.GetGuidance().GetWhenToUse(),
			WhenNotToUse: p.GetGuidance().GetWhenNotToUse(),
			OnError:      p.GetGuidance().GetOnError(),
		},
		Rules: Rules(t.Policy),
	}
	for _, a := range p.GetAudience() {
		head.Audience = append(head.Audience, a.String())
	}
	head.Limits = Limits(g, t, false)
	b, err := encodeHead(t, &head)
	if err != nil {
		return nil, err
	}
	r := &row{head: b, delegated: b, audiences: admitted(p.GetAudience())}
	if agentKeyed(g, t) {
		head.Limits = Limits(g, t, true)
		if r.delegated, err = encodeHead(t, &head); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// encodeHead is head's JSON up to the input schema's value.
func encodeHead(t *call.Tool, head *rowHead) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(head); err != nil {
		return nil, fmt.Errorf("listing: tool %s: %w", t.FQN, err)
	}
	b := bytes.TrimSuffix(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("}"))
	return append(b, `,"input_schema":`...), nil
}

// admitted is the set of audiences a declaration admits: AGENT when it
// declares none, and AUDIENCE_UNSPECIFIED reads as AGENT. A number this
// build has no name for admits nobody.
func admitted(declared []toolv1.Audience) uint8 {
	if len(declared) == 0 {
		bit, _ := audienceBit(toolv1.Audience_AUDIENCE_AGENT)
		return bit
	}
	var set uint8
	for _, a := range declared {
		bit, _ := audienceBit(a)
		set |= bit
	}
	return set
}

// audienceBit is a's bit; AUDIENCE_UNSPECIFIED is AGENT's.
func audienceBit(a toolv1.Audience) (uint8, bool) {
	switch a {
	case toolv1.Audience_AUDIENCE_UNSPECIFIED:
		return 1 << toolv1.Audience_AUDIENCE_AGENT, true
	case toolv1.Audience_AUDIENCE_AGENT, toolv1.Audience_AUDIENCE_PERSON, toolv1.Audience_AUDIENCE_RUNNER:
		return 1 << a, true
	}
	return 0, false
}

// Rule is an instance rule as a caller is shown it: what it allows, never
// how it is written (docs/decisions/0095).
type Rule struct {
	ID          string `json:"id"`
	Description string `json:"description"`
}

// Rules are p's instance rules — require, reveal and filter alike —
// sorted by id; empty, never nil, when it has none. The expressions are
// never among them: they can name attributes and fields a caller has no
// business learning the shape of, and a model needs the limit, not its
// implementation.
func Rules(p *toolv1.ToolPolicy) []Rule {
	inst := p.GetInstance()
	out := make([]Rule, 0, len(inst.GetRequire())+len(inst.GetReveal())+len(inst.GetFilter()))
	for _, r := range inst.GetRequire() {
		out = append(out, Rule{ID: r.GetId(), Description: r.GetDescription()})
	}
	for _, r := range inst.GetReveal() {
		out = append(out, Rule{ID: r.GetId(), Description: r.GetDescription()})
	}
	for _, f := range inst.GetFilter() {
		out = append(out, Rule{ID: f.GetId(), Description: f.GetDescription()})
	}
	slices.SortFunc(out, func(a, b Rule) int { return strings.Compare(a.ID, b.ID) })
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
