package mcp

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync/atomic"

	"github.com/garm-dev/garm/daemon/internal/cache"
	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/listing"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Keys of garm's own _meta members, on tools, on results and on calls.
const (
	metaApprovalMode    = "dev.garm/approval_mode"
	metaMaterialFields  = "dev.garm/material_fields"
	metaVerb            = "dev.garm/verb"
	metaRules           = "dev.garm/rules"
	metaLimits          = "dev.garm/limits"
	metaMethod          = "dev.garm/method"
	metaEventID         = "dev.garm/event_id"
	metaCatalogueDigest = "dev.garm/catalogue_digest"
	// metaCatalogueVersion is a signed catalogue's version, on a listing.
	metaCatalogueVersion = "dev.garm/catalogue_version"
	metaGrant            = "dev.garm/grant"
	metaTimeoutMs        = "dev.garm/timeout_ms"
	metaCorrelationID    = "dev.garm/correlation_id"
	metaTraceparent      = "traceparent"
	metaTracestate       = "tracestate"
)

// toolCache keeps, per generation, each tool's MCP entry as JSON cut where
// the caller's input schema goes: everything else in it is the same for
// every caller.
type toolCache struct {
	gens *cache.Map[*catalogue.Generation, []atomic.Pointer[toolJSON]]
}

type toolJSON struct {
	// before and after surround the inputSchema value.
	before, after []byte
}

func newToolCache() *toolCache {
	return &toolCache{gens: cache.New[*catalogue.Generation, []atomic.Pointer[toolJSON]](2)}
}

// of is en's tool as JSON; a tool's entry is cached once for callers who
// are not delegated and once for those who are, whose limits can differ.
func (c *toolCache) of(g *catalogue.Generation, en listing.Entry) (*toolJSON, error) {
	t := en.Tool
	slots, ok := c.gens.Get(g)
	if !ok {
		slots = c.gens.Put(g, make([]atomic.Pointer[toolJSON], 2*len(g.Tools)))
	}
	i := 2 * t.Index
	if en.Delegated {
		i++
	}
	slot := &slots[i]
	if tj := slot.Load(); tj != nil {
		return tj, nil
	}
	tj, err := newToolJSON(t, en.Limits)
	if err != nil {
		return nil, err
	}
	slot.CompareAndSwap(nil, tj)
	return slot.Load(), nil
}

// schemaSentinel stands where the schema goes while the rest is marshalled.
var schemaSentinel = []byte(`"inputSchema":0`)

func newToolJSON(t *call.Tool, limits []listing.Limit) (*toolJSON, error) {
	entry := Tool(t)
	if len(limits) > 0 {
		entry.Meta[metaLimits] = limits
	}
	entry.InputSchema = json.RawMessage("0")
	b, err := json.Marshal(entry)
	if err != nil {
		return nil, err
	}
	i := bytes.Index(b, schemaSentinel)
	cut := i + len(schemaSentinel) - 1
	return &toolJSON{before: b[:cut], after: b[cut+1:]}, nil
}

// Tool is t as an MCP tools/list entry, less its input schema, which is the
// caller's: name is the FQN, the description carries the guidance (a model
// reads only the description), the annotations come from the contract's
// verb and effects, and _meta says how a human takes part. The limits that
// apply to a caller join _meta when it is listed for one.
func Tool(t *call.Tool) *sdk.Tool {
	p := t.Policy
	approval := p.GetApproval()
	material := approval.GetMaterialFields()
	if material == nil {
		material = []string{}
	}
	return &sdk.Tool{
		Name:        t.FQN,
		Title:       p.GetTitle(),
		Description: Description(p),
		Annotations: Annotations(t.Verb, p.GetEffects()),
		Meta: sdk.Meta{
			metaApprovalMode:   approval.GetMode().String(),
			metaMaterialFields: material,
			metaVerb:           t.Verb.String(),
			metaRules:          listing.Rules(p),
			metaMethod:         t.Method,
		},
	}
}

// Description is the tool's description followed by its guidance, each
// part that is given on a line of its own, then its instance rules'
// descriptions (listing.Rules: sorted by id, never the expressions), so a
// model knows the limits before it calls.
func Description(p *toolv1.ToolPolicy) string {
	var b strings.Builder
	b.WriteString(p.GetDescription())
	g := p.GetGuidance()
	sep := "\n\n"
	for _, part := range []struct{ label, text string }{
		{"When to use: ", g.GetWhenToUse()},
		{"When not to use: ", g.GetWhenNotToUse()},
		{"On error: ", g.GetOnError()},
	} {
		if part.text == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(sep)
		}
		sep = "\n"
		b.WriteString(part.label)
		b.WriteString(part.text)
	}
	if rules := listing.Rules(p); len(rules) > 0 {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("Limits:")
		for _, r := range rules {
			b.WriteString("\n- ")
			b.WriteString(r.Description)
			b.WriteString(" (rule ")
			b.WriteString(r.ID)
			b.WriteString(")")
		}
	}
	return b.String()
}

// Annotations are MCP's hints from the contract: read-only for READ;
// destructive for DESTRUCTIVE or an effect that cannot be undone
// (unspecified reversibility counts as none, as lint reads it); idempotent
// and open-world from the declared effects.
func Annotations(verb toolv1.Verb, e *toolv1.ToolPolicy_Effects) *sdk.ToolAnnotations {
	external := e.GetExternal()
	a := &sdk.ToolAnnotations{
		ReadOnlyHint:   verb == toolv1.Verb_VERB_READ,
		IdempotentHint: e.GetIdempotent(),
		OpenWorldHint:  &external,
	}
	if !a.ReadOnlyHint {
		r := e.GetReversibility()
		destructive := verb == toolv1.Verb_VERB_DESTRUCTIVE ||
			r == toolv1.Reversibility_REVERSIBILITY_NONE || r == toolv1.Reversibility_REVERSIBILITY_UNSPECIFIED
		a.DestructiveHint = &destructive
	}
	return a
}
