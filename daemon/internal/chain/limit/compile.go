package limit

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/garm-dev/garm/daemon/internal/call"
	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"google.golang.org/protobuf/proto"
)

// idPattern is what a limit's id must match (toolv1.Limit's id).
var idPattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// Limits are one generation's compiled limits, by tool index. A Limits is
// never changed after Compile returns it.
type Limits struct {
	byTool [][]*Limit
}

// Of is the tool's limits in id order; nil for a tool with none, and for a
// nil Limits.
func (l *Limits) Of(t *call.Tool) []*Limit {
	if l == nil || t.Index >= len(l.byTool) {
		return nil
	}
	return l.byTool[t.Index]
}

// Any reports whether some tool has a limit.
func (l *Limits) Any() bool {
	if l == nil {
		return false
	}
	for _, ls := range l.byTool {
		if len(ls) > 0 {
			return true
		}
	}
	return false
}

// Limit is one effective limit as the step runs it: everything a call
// needs computed at mount.
type Limit struct {
	// Tool is the tool's FQN; ID the limit's id; Description its sentence.
	Tool, ID, Description string
	// Key are the key's parts in declaration order; KeyName spells them
	// for the ledger ("tenant+subject").
	Key     []toolv1.Limit_KeyPart
	KeyName string
	// AgentKeyed is true when the key names the agent: the limit applies
	// only to delegated calls.
	AgentKeyed bool
	// Concurrency is true for a bound on calls in flight; Count is then
	// in_flight and Cost 1. For a rate, Count units per Window, each call
	// costing Cost.
	Concurrency bool
	Count       uint32
	Cost        uint32
	Window      toolv1.Limit_Window
	// Span is the window's length, or the concurrency lease.
	Span time.Duration
	// Soft admits on the replica's local bucket when the bus is away.
	Soft bool
	// prefix is the subject up to the window index, for this tool and
	// limit: "garm.limits.<class>.<tool hash>.<id>.".
	prefix string
}

// Compile checks a catalogue's effective limits against its tools and the
// limits their contracts declare, and compiles them. It returns every
// problem found, each naming the tool and the limit.
func Compile(tools []*call.Tool, plans []*planv1.LimitPlan) (*Limits, []string) {
	var problems []string
	byFQN := make(map[string]*call.Tool, len(tools))
	for _, t := range tools {
		byFQN[t.FQN] = t
	}
	out := &Limits{byTool: make([][]*Limit, len(tools))}
	seen := map[string]bool{}
	for _, p := range plans {
		t := byFQN[p.GetTool()]
		l := p.GetLimit()
		where := fmt.Sprintf("limit %q of tool %s", l.GetId(), p.GetTool())
		if t == nil {
			problems = append(problems, where+" names no tool of the catalogue")
			continue
		}
		if seen[p.GetTool()+"\x00"+l.GetId()] {
			problems = append(problems, where+" is declared twice")
			continue
		}
		seen[p.GetTool()+"\x00"+l.GetId()] = true
		c, why := compileOne(t.FQN, l)
		if why == "" {
			why = originProblem(p)
		}
		if why != "" {
			problems = append(problems, where+" "+why)
			continue
		}
		out.byTool[t.Index] = append(out.byTool[t.Index], c)
	}
	// Every limit a tool's contract declares is enforced: a catalogue that
	// drops one would loosen the contract.
	for _, t := range tools {
		for _, l := range t.Policy.GetLimits() {
			if !seen[t.FQN+"\x00"+l.GetId()] {
				problems = append(problems, fmt.Sprintf("limit %q of tool %s is declared by the tool's contract and missing from the catalogue's limits; a deployment may tighten a contract's limit, never drop it", l.GetId(), t.FQN))
			}
		}
	}
	if len(problems) > 0 {
		return nil, problems
	}
	return out, nil
}

// compileOne checks one limit and computes what the step needs; why says
// what is wrong, "" when nothing is.
func compileOne(tool string, l *toolv1.Limit) (*Limit, string) {
	if !idPattern.MatchString(l.GetId()) {
		return nil, "has an id that is not ^[a-z][a-z0-9_]{0,63}$"
	}
	if strings.TrimSpace(l.GetDescription()) == "" {
		return nil, "has no description"
	}
	c := &Limit{Tool: tool, ID: l.GetId(), Description: l.GetDescription(), Soft: l.GetSoft()}
	if len(l.GetKey()) == 0 {
		return nil, "has no key"
	}
	names := make([]string, 0, len(l.GetKey()))
	have := map[toolv1.Limit_KeyPart]bool{}
	for _, k := range l.GetKey() {
		name, ok := keyNames[k]
		if !ok {
			return nil, fmt.Sprintf("has a key part %d garmd does not know", int32(k))
		}
		if have[k] {
			return nil, "names the key part " + name + " twice"
		}
		have[k] = true
		names = append(names, name)
		c.Key = append(c.Key, k)
	}
	c.KeyName = strings.Join(names, "+")
	c.AgentKeyed = have[toolv1.Limit_KEY_PART_AGENT]
	switch {
	case l.GetRate() != nil:
		r := l.GetRate()
		w, ok := windows[r.GetWindow()]
		if !ok {
			return nil, "has a rate without a known window"
		}
		c.Window, c.Span, c.Count, c.Cost = r.GetWindow(), w.span, r.GetCount(), l.GetCost()
		if c.Cost == 0 {
			return nil, "has a rate with cost 0; the catalogue resolves a rate's cost, never 0"
		}
		if c.Count < c.Cost {
			return nil, fmt.Sprintf("admits %d per window and a call costs %d: it can never admit a call", c.Count, c.Cost)
		}
		c.prefix = subjectRoot + w.class + "." + toolToken(tool) + "." + c.ID + "."
	case l.GetConcurrency() != nil:
		if l.GetConcurrency().GetInFlight() == 0 {
			return nil, "bounds the calls in flight at 0: it can never admit a call"
		}
		if l.GetCost() > 1 {
			return nil, "gives a concurrency bound a cost; a cost counts against a rate only"
		}
		c.Concurrency, c.Count, c.Cost, c.Span = true, l.GetConcurrency().GetInFlight(), 1, Lease
		c.prefix = subjectRoot + concurrencyClass + "." + toolToken(tool) + "." + c.ID + "."
	default:
		return nil, "is neither a rate nor a concurrency bound"
	}
	return c, ""
}

// originProblem checks a plan's origin: a tightened limit is no looser than
// the contract's limit it names.
func originProblem(p *planv1.LimitPlan) string {
	switch p.GetOrigin() {
	case planv1.LimitOrigin_LIMIT_ORIGIN_CONTRACT, planv1.LimitOrigin_LIMIT_ORIGIN_DEPLOYMENT:
		return ""
	case planv1.LimitOrigin_LIMIT_ORIGIN_TIGHTENED:
	default:
		return "has no origin"
	}
	l, c := p.GetLimit(), p.GetContract()
	if c == nil || c.GetId() != l.GetId() {
		return "is tightened and names no contract limit of the same id"
	}
	if why := looser(l, c); why != "" {
		return "loosens its contract's: " + why
	}
	return ""
}

// looser says how l admits more than the contract's c, "" when it does not.
func looser(l, c *toolv1.Limit) string {
	if !c.GetSoft() && l.GetSoft() {
		return "it is soft and the contract's is hard"
	}
	if !proto.Equal(&toolv1.Limit{Key: l.GetKey()}, &toolv1.Limit{Key: c.GetKey()}) {
		return "its key differs"
	}
	cost := func(x *toolv1.Limit) uint64 { return max(uint64(x.GetCost()), 1) }
	switch {
	case c.GetRate() != nil:
		lr, cr := l.GetRate(), c.GetRate()
		if lr == nil {
			return "it is not a rate"
		}
		lw, lok := windows[lr.GetWindow()]
		cw, cok := windows[cr.GetWindow()]
		if !lok || !cok {
			return "a window is unknown"
		}
		// Calls admitted per contract window: the deployment's count over
		// its window, scaled to the contract's, at its cost, never more.
		lcalls := uint64(lr.GetCount()) / cost(l) * uint64(cw.span/lw.span)
		ccalls := uint64(cr.GetCount()) / cost(c)
		if lw.span > cw.span {
			return "its window is longer than the contract's"
		}
		if lcalls > ccalls {
			return fmt.Sprintf("it admits %d calls per contract window, the contract %d", lcalls, ccalls)
		}
	case c.GetConcurrency() != nil:
		if l.GetConcurrency() == nil || l.GetConcurrency().GetInFlight() > c.GetConcurrency().GetInFlight() {
			return "it admits more calls in flight"
		}
	}
	return ""
}

var keyNames = map[toolv1.Limit_KeyPart]string{
	toolv1.Limit_KEY_PART_TENANT:  "tenant",
	toolv1.Limit_KEY_PART_SUBJECT: "subject",
	toolv1.Limit_KEY_PART_AGENT:   "agent",
	toolv1.Limit_KEY_PART_TOOL:    "tool",
}

// toolToken is the tool's FQN as one subject token: a digest, so a tool's
// name never shapes a subject.
func toolToken(fqn string) string {
	sum := sha256.Sum256([]byte(fqn))
	return hex.EncodeToString(sum[:8])
}
