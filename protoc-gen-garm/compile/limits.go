package compile

import (
	"fmt"
	"slices"
	"strings"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"google.golang.org/protobuf/proto"
)

// LimitProblem is one thing wrong with a limit, with the lint rule that
// reports it. Message does not name the limit: the caller says where it is.
type LimitProblem struct {
	Rule    string
	Message string
}

// LimitIDPattern is what a limit's id must match: the tool-name pattern, as
// for instance rules, since refusals, rows and metrics name a limit by it.
var LimitIDPattern = toolNamePattern

// keyPartNames and windowNames spell key parts and windows as messages, the
// ledger's limit_key and catalogue.yaml do.
var (
	keyPartNames = map[toolv1.Limit_KeyPart]string{
		toolv1.Limit_KEY_PART_TENANT:  "tenant",
		toolv1.Limit_KEY_PART_SUBJECT: "subject",
		toolv1.Limit_KEY_PART_AGENT:   "agent",
		toolv1.Limit_KEY_PART_TOOL:    "tool",
	}
	windowNames = map[toolv1.Limit_Window]string{
		toolv1.Limit_WINDOW_SECOND: "second",
		toolv1.Limit_WINDOW_MINUTE: "minute",
		toolv1.Limit_WINDOW_HOUR:   "hour",
		toolv1.Limit_WINDOW_DAY:    "day",
	}
)

// KeyPartName spells a key part ("subject"), or its enum name (or number)
// when it is not one a key may hold.
func KeyPartName(p toolv1.Limit_KeyPart) string {
	if n, ok := keyPartNames[p]; ok {
		return n
	}
	return p.String()
}

// WindowName spells a window ("minute"), or its enum name (or number) when
// it is not one a rate may have.
func WindowName(w toolv1.Limit_Window) string {
	if n, ok := windowNames[w]; ok {
		return n
	}
	return w.String()
}

// KeyName is a key as the ledger's limit_key spells it: its parts' names
// joined by "+" ("tenant+subject").
func KeyName(key []toolv1.Limit_KeyPart) string {
	names := make([]string, len(key))
	for i, p := range key {
		names[i] = KeyPartName(p)
	}
	return strings.Join(names, "+")
}

// CheckLimit returns every problem of one limit taken alone, in rule order:
// L50 its id and description, L51 its key, L52 its kind (a rate's window,
// a cost or soft beside a concurrency bound), L53 a bound that can never
// admit one call. A limit with none is sound: garmd can enforce it as
// written.
func CheckLimit(l *toolv1.Limit) []LimitProblem {
	var out []LimitProblem
	add := func(rule, format string, args ...any) {
		out = append(out, LimitProblem{rule, fmt.Sprintf(format, args...)})
	}
	if !LimitIDPattern.MatchString(l.GetId()) {
		add("L50", "its id does not match %s", LimitIDPattern)
	}
	if strings.TrimSpace(l.GetDescription()) == "" {
		add("L50", "it needs a description: callers are shown it when they are refused")
	}
	key := l.GetKey()
	if len(key) == 0 {
		add("L51", "it needs a key: one or more of tenant, subject, agent, or tool alone")
	}
	seen := map[toolv1.Limit_KeyPart]bool{}
	for _, p := range key {
		switch {
		case keyPartNames[p] == "":
			add("L51", "key part %s is not tenant, subject, agent or tool", KeyPartName(p))
		case seen[p]:
			add("L51", "key part %s is named twice", KeyPartName(p))
		}
		seen[p] = true
	}
	if seen[toolv1.Limit_KEY_PART_TOOL] && len(key) > 1 {
		add("L51", "key part tool counts every caller together and stands alone: every limit is already counted per tool, so name the other parts without it")
	}
	switch k := l.GetKind().(type) {
	case nil:
		add("L52", "it needs a kind: a rate or a concurrency bound")
	case *toolv1.Limit_Rate_:
		if windowNames[k.Rate.GetWindow()] == "" {
			add("L52", "a rate needs a window: second, minute, hour or day")
		}
		switch cost := EffectiveCost(l); {
		case k.Rate.GetCount() == 0:
			add("L53", "it admits no call: a rate's count must be at least 1")
		case cost > k.Rate.GetCount():
			add("L53", "it admits no call: one call costs %d and the rate admits %d per %s", cost, k.Rate.GetCount(), WindowName(k.Rate.GetWindow()))
		}
	case *toolv1.Limit_Concurrency_:
		if l.GetCost() != 0 {
			add("L52", "cost counts against a rate; a concurrency bound counts calls in flight")
		}
		if l.GetSoft() {
			add("L52", "soft applies to rates only: a concurrency bound is counted up and down on the bus and has no local share")
		}
		if k.Concurrency.GetInFlight() == 0 {
			add("L53", "it admits no call: in_flight must be at least 1")
		}
	}
	return out
}

// EffectiveCost is what one call counts against a rate: the declared cost,
// 1 when none is declared; 0 for a concurrency bound.
func EffectiveCost(l *toolv1.Limit) uint32 {
	if l.GetRate() == nil {
		return 0
	}
	return max(l.GetCost(), 1)
}

// ResolveLimit is a sound limit as the catalogue carries it: a copy with a
// rate's cost resolved (never 0) and the key's parts in number order, so
// two spellings of one limit are equal bytes.
func ResolveLimit(l *toolv1.Limit) *toolv1.Limit {
	out := proto.CloneOf(l)
	if out.GetRate() != nil {
		out.Cost = EffectiveCost(l)
	}
	slices.Sort(out.Key)
	out.Key = slices.Compact(out.Key)
	return out
}

// AdmitsAgents reports whether a tool's audience includes agents: an empty
// audience is agents only, and an unspecified entry reads as an agent.
func AdmitsAgents(p *toolv1.ToolPolicy) bool {
	a := p.GetAudience()
	return len(a) == 0 || slices.Contains(a, toolv1.Audience_AUDIENCE_AGENT) || slices.Contains(a, toolv1.Audience_AUDIENCE_UNSPECIFIED)
}

// LimitWarnings are the findings about a sound limit that depend on its
// tool and never refuse: L54 a limit keyed on the agent of a tool whose
// audience excludes agents (it counts only delegated calls, which such a
// tool is not listed for), L55 a soft limit on a VERB_DESTRUCTIVE tool (an
// unreachable bus lets destructive calls through on a replica's share).
func LimitWarnings(p *toolv1.ToolPolicy, l *toolv1.Limit) []LimitProblem {
	var out []LimitProblem
	if slices.Contains(l.GetKey(), toolv1.Limit_KEY_PART_AGENT) && !AdmitsAgents(p) {
		out = append(out, LimitProblem{"L54", "it is keyed on the agent, and the tool's audience excludes agents: it counts only delegated calls"})
	}
	if l.GetSoft() && p.GetVerb() == toolv1.Verb_VERB_DESTRUCTIVE {
		out = append(out, LimitProblem{"L55", "it is soft on a VERB_DESTRUCTIVE tool: when the bus cannot be reached, destructive calls pass on each replica's share"})
	}
	return out
}

// LimitOrder says how one limit's bound compares with another's.
type LimitOrder int

const (
	// LimitSame admits exactly what the other admits.
	LimitSame LimitOrder = iota
	// LimitTighter admits no call the other refuses, and refuses some the
	// other admits.
	LimitTighter
	// LimitLooser is the reverse of LimitTighter.
	LimitLooser
	// LimitMixed is tighter in one term and looser in another.
	LimitMixed
	// LimitUnlike has another kind, key or window: the two count different
	// things and neither bounds the other.
	LimitUnlike
)

// CompareLimits says how is bounds calls compared with was, both resolved
// (ResolveLimit), and names the terms that differ ("count 5, was 10") in
// the order kind, key, window, count, in_flight, cost, soft. A lower count
// or in_flight, a higher cost and hard over soft are tighter.
// Descriptions are prose and not compared.
func CompareLimits(was, is *toolv1.Limit) (LimitOrder, []string) {
	var terms []string
	if limitKindName(is) != limitKindName(was) {
		return LimitUnlike, []string{fmt.Sprintf("a %s, was a %s", limitKindName(is), limitKindName(was))}
	}
	if !slices.Equal(was.GetKey(), is.GetKey()) {
		terms = append(terms, fmt.Sprintf("key %s, was %s", KeyName(is.GetKey()), KeyName(was.GetKey())))
	}
	if w, i := was.GetRate().GetWindow(), is.GetRate().GetWindow(); w != i {
		terms = append(terms, fmt.Sprintf("window %s, was %s", WindowName(i), WindowName(w)))
	}
	if len(terms) > 0 {
		return LimitUnlike, terms
	}
	tighter, looser := false, false
	// compare records one term; lower is tighter when lowerTightens.
	compare := func(name string, was, is uint32, lowerTightens bool) {
		if was == is {
			return
		}
		terms = append(terms, fmt.Sprintf("%s %d, was %d", name, is, was))
		if (is < was) == lowerTightens {
			tighter = true
		} else {
			looser = true
		}
	}
	compare("count", was.GetRate().GetCount(), is.GetRate().GetCount(), true)
	compare("in_flight", was.GetConcurrency().GetInFlight(), is.GetConcurrency().GetInFlight(), true)
	compare("cost", was.GetCost(), is.GetCost(), false)
	switch {
	case was.GetSoft() && !is.GetSoft():
		terms, tighter = append(terms, "hard, was soft"), true
	case !was.GetSoft() && is.GetSoft():
		terms, looser = append(terms, "soft, was hard"), true
	}
	switch {
	case tighter && looser:
		return LimitMixed, terms
	case tighter:
		return LimitTighter, terms
	case looser:
		return LimitLooser, terms
	}
	return LimitSame, terms
}

// limitKindName names a limit's kind in comparisons.
func limitKindName(l *toolv1.Limit) string {
	switch l.GetKind().(type) {
	case *toolv1.Limit_Rate_:
		return "rate"
	case *toolv1.Limit_Concurrency_:
		return "concurrency bound"
	}
	return "limit of no kind"
}

// DescribeLimit is a limit's bound in one phrase, as inspect and diff print
// it: "5 per minute per tenant+subject, cost 2", "3 in flight per tool",
// with ", soft" when it is.
func DescribeLimit(l *toolv1.Limit) string {
	var s string
	switch k := l.GetKind().(type) {
	case *toolv1.Limit_Rate_:
		s = fmt.Sprintf("%d per %s per %s", k.Rate.GetCount(), WindowName(k.Rate.GetWindow()), KeyName(l.GetKey()))
		if c := EffectiveCost(l); c != 1 {
			s += fmt.Sprintf(", cost %d", c)
		}
	case *toolv1.Limit_Concurrency_:
		s = fmt.Sprintf("%d in flight per %s", k.Concurrency.GetInFlight(), KeyName(l.GetKey()))
	default:
		s = "no kind per " + KeyName(l.GetKey())
	}
	if l.GetSoft() {
		s += ", soft"
	}
	return s
}
