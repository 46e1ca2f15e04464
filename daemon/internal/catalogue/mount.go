package catalogue

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/chain/card"
	"github.com/garm-dev/garm/daemon/internal/chain/instance"
	"github.com/garm-dev/garm/daemon/internal/chain/limit"
	"github.com/garm-dev/garm/daemon/internal/deny"
	"github.com/garm-dev/garm/daemon/internal/fieldpath"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/runtime/wire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// ListingMethod is the route garmd answers itself with the listing (design
// 7.3, 7.6). No tool may be served there.
const ListingMethod = "/garm.v1.ToolCatalogService/ListTools"

// cardMessage is the message garmd projects by name (design 3.4, 7.8).
const cardMessage protoreflect.FullName = "garm.card.v1.Card"

// Steps says which optional parts of the chain this garmd runs: what a
// catalogue's declarations may rely on.
type Steps struct {
	// Grants is step 5: approval grants are configured (--grant-issuer).
	Grants bool
	// SpentFor is how long the spent-grant bucket keeps a spent grant (its
	// TTL, read back at startup); 0 keeps it forever. GrantSkew is the clock
	// skew step 5 allows. A MODE_GRANT tool mounts only when a grant it
	// accepts (max_grant_age_seconds plus the skew) cannot outlive the
	// record that it was spent.
	SpentFor  time.Duration
	GrantSkew time.Duration
	// Notify is step 10 (--notify).
	Notify bool
	// AuditRetention is the audit sink's asserted retention
	// (--audit-stream-retention): nil when there is no audit sink, 0 when
	// the stream keeps rows indefinitely.
	AuditRetention *time.Duration
	// Limits is the limit step: a counter on the bus is configured. A
	// catalogue with limits mounts only with it. ToolTimeout is the
	// ceiling on a call's deadline, which a concurrency bound's lease
	// (limit.Lease) must cover.
	Limits      bool
	ToolTimeout time.Duration
}

// Mount decides whether g may serve under s: an allowlist over the
// governance each tool declares (design 7.2). It returns nil, or a
// *deny.Misconfigured listing every problem, tools in FQN order, each
// naming the tool, what it declares and what is missing.
//
// Mount also compiles what the chain runs once per generation: the
// protovalidate validator over every tool's input, rules and CEL included,
// so a rule that does not compile refuses the catalogue instead of failing
// its tool's calls. A generation serves only once Mount has accepted it.
// A generation that Reload made over a serving one takes, of that one's
// validator, the shards whose inputs are the very descriptors it reused.
// Likewise every instance rule is compiled against the generation's own
// descriptors (a rule that does not compile refuses the catalogue, naming
// tool and rule), taking from the serving generation only a program whose
// descriptors are the very objects it reused, with the same expression and
// declarations (instance.Compile).
func Mount(g *Generation, s Steps) error {
	serving, servingRules, vouched := g.servingValidator, g.servingRules, g.vouched()
	g.servingValidator, g.servingRules, g.validated = nil, nil, nil
	var problems []string
	cards := cardReach{}
	for _, t := range g.Tools {
		problems = append(problems, mountProblemsOf(t, s, cards)...)
	}
	if len(problems) > 0 {
		return &deny.Misconfigured{Problems: problems}
	}
	v, problems := compileValidator(g.Tools, serving, vouched)
	if len(problems) > 0 {
		return &deny.Misconfigured{Problems: problems}
	}
	rules, problems := instance.Compile(g.Tools, g.Catalogue.GetAttributes(), len(g.Compartments), servingRules)
	if len(problems) > 0 {
		return &deny.Misconfigured{Problems: problems}
	}
	limits, problems := mountLimits(g, s)
	if len(problems) > 0 {
		return &deny.Misconfigured{Problems: problems}
	}
	g.validator, g.rules, g.limits = v, rules, limits
	return nil
}

// mountLimits compiles the catalogue's effective limits (limit.Compile) and
// checks this garmd can count them.
func mountLimits(g *Generation, s Steps) (*limit.Limits, []string) {
	limits, problems := limit.Compile(g.Tools, g.Catalogue.GetLimits())
	if len(problems) > 0 || !limits.Any() {
		return limits, problems
	}
	if !s.Limits {
		return nil, []string{"the catalogue declares limits, which need the bus to count them, and garmd has no bus (--nats)"}
	}
	for _, t := range g.Tools {
		for _, l := range limits.Of(t) {
			if l.Concurrency && s.ToolTimeout > limit.Lease {
				problems = append(problems, fmt.Sprintf("limit %q of tool %s bounds calls in flight, whose counts last a lease of %s, and --tool-timeout %s is longer", l.ID, t.FQN, limit.Lease, s.ToolTimeout))
			}
		}
	}
	return limits, problems
}

func mountProblems(t *call.Tool, s Steps) []string { return mountProblemsOf(t, s, nil) }

// mountProblemsOf is mountProblems; cards, when given, remembers which
// files can reach a card across the tools of one mount.
func mountProblemsOf(t *call.Tool, s Steps, cards cardReach) []string {
	var out []string
	add := func(format string, args ...any) {
		out = append(out, fmt.Sprintf("tool %s ", t.FQN)+fmt.Sprintf(format, args...))
	}
	if t.Method == ListingMethod {
		add("is declared at %s, the path garmd answers with its own listing; no tool is served there", ListingMethod)
	}

	switch mode := t.Policy.GetApproval().GetMode(); mode {
	case toolv1.ToolPolicy_Approval_MODE_UNSPECIFIED, toolv1.ToolPolicy_Approval_MODE_NONE:
	case toolv1.ToolPolicy_Approval_MODE_GRANT:
		approval := t.Policy.GetApproval()
		switch age := time.Duration(approval.GetMaxGrantAgeSeconds()) * time.Second; {
		case !s.Grants:
			add("declares approval %s, which needs approval grants (step 5), and no grant issuer is configured (--grant-issuer)", mode)
		case approval.GetApproverMinClearance() == toolv1.Clearance_CLEARANCE_UNSPECIFIED:
			add("declares approval %s without approver_min_clearance; no approver's clearance is allowed against an unspecified one, so no grant could ever verify", mode)
		case age <= 0:
			add("declares approval %s without max_grant_age_seconds; every grant would be too old", mode)
		case s.SpentFor > 0 && age+s.GrantSkew > s.SpentFor:
			add("declares approval %s with max_grant_age_seconds %d: with the %s skew a grant is accepted for %s, longer than %s keeps a spent grant (its TTL is %s), so a spent grant could be spent again; raise the bucket's TTL to at least %s",
				mode, approval.GetMaxGrantAgeSeconds(), s.GrantSkew, age+s.GrantSkew, wire.GrantsSpentBucket, s.SpentFor, age+s.GrantSkew)
		}
	case toolv1.ToolPolicy_Approval_MODE_NOTIFY:
		if !s.Notify {
			add("declares approval %s, which needs notification (step 10), and --notify is off", mode)
		}
	default:
		add("declares approval mode %d, which this build of garmd does not know how to enforce", int32(mode))
	}

	audit := t.Policy.GetAudit()
	switch level := audit.GetLevel(); level {
	case toolv1.ToolPolicy_Audit_LEVEL_UNSPECIFIED, toolv1.ToolPolicy_Audit_LEVEL_LEDGER:
		if audit.GetFailClosed() {
			add("declares fail_closed at %s; fail_closed needs LEVEL_AUDIT, the only level with a write-ahead to fail on", level)
		}
	case toolv1.ToolPolicy_Audit_LEVEL_AUDIT:
		days := audit.GetRetainDays()
		switch r := s.AuditRetention; {
		case r == nil:
			add("declares %s with retain_days %d, which needs an audit sink, and none is configured (--audit-stream-retention)", level, days)
		case !retentionCovers(*r, days):
			add("declares %s with retain_days %d, and the audit stream's asserted retention %s does not cover it (--audit-stream-retention must be 0, indefinite, or at least %dh)", level, days, *r, uint64(days)*24)
		}
	default:
		add("declares audit level %d, which this build of garmd does not know how to enforce", int32(level))
	}

	if path, ok := cards.reachesCard(t.Output); ok {
		if err := card.CheckVocabulary(cardAt(t.Output, path)); err != nil {
			where := "is itself a card"
			if path != "" {
				where = "reaches " + string(cardMessage) + " at " + path
			}
			add("answers with %s, which %s, and the catalogue's card vocabulary is not the one garmd projects: %v", t.Output.FullName(), where, err)
		}
	}
	return out
}

// cardAt is the card message at path below md, path being what
// reachesCard found.
func cardAt(md protoreflect.MessageDescriptor, path string) protoreflect.MessageDescriptor {
	if path == "" {
		return md
	}
	for _, name := range strings.Split(path, ".") {
		md = fieldpath.Child(md.Fields().ByName(protoreflect.Name(name)))
	}
	return md
}

// retentionCovers reports whether a stream asserting retention r keeps a
// row for days days: 0 is indefinite, and nothing negative covers anything.
func retentionCovers(r time.Duration, days uint32) bool {
	if r == 0 {
		return true
	}
	if r < 0 || uint64(days) > uint64(math.MaxInt64/int64(24*time.Hour)) {
		return false
	}
	return r >= time.Duration(days)*24*time.Hour
}

// cardReach remembers, per file, whether a message named cardMessage is
// declared in the file or in a file it imports, directly or not. A message
// reaches only messages of its file's imports, and a registry holds one
// message of a name, so a message whose file cannot reach the card's holds
// no card, and is not walked: most catalogues hold no card at all.
type cardReach map[protoreflect.FileDescriptor]bool

// reachesCard is the package's reachesCard, skipping the walk where md's
// file cannot reach a card; a nil cardReach always walks.
func (r cardReach) reachesCard(md protoreflect.MessageDescriptor) (string, bool) {
	if r != nil && !r.file(md.ParentFile()) {
		return "", false
	}
	return reachesCard(md)
}

func (r cardReach) file(f protoreflect.FileDescriptor) bool {
	if reach, ok := r[f]; ok {
		return reach
	}
	r[f] = false // imports are acyclic; this only ends a malformed walk
	reach := declaresCard(f.Messages())
	imports := f.Imports()
	for i := 0; i < imports.Len() && !reach; i++ {
		reach = r.file(imports.Get(i).FileDescriptor)
	}
	r[f] = reach
	return reach
}

// declaresCard reports whether messages, or any message nested in them, is
// named cardMessage.
func declaresCard(messages protoreflect.MessageDescriptors) bool {
	for i := 0; i < messages.Len(); i++ {
		md := messages.Get(i)
		if md.FullName() == cardMessage || declaresCard(md.Messages()) {
			return true
		}
	}
	return false
}

// reachesCard reports whether md is a card or holds one at any depth —
// through a message field, a list or a map's values — and the dotted path
// of the first it finds ("" for md itself). Well-known types are values,
// not trees, and hold no card.
func reachesCard(md protoreflect.MessageDescriptor) (string, bool) {
	seen := map[protoreflect.FullName]bool{}
	var walk func(md protoreflect.MessageDescriptor, path []string) (string, bool)
	walk = func(md protoreflect.MessageDescriptor, path []string) (string, bool) {
		if md.FullName() == cardMessage {
			return strings.Join(path, "."), true
		}
		if seen[md.FullName()] || strings.HasPrefix(string(md.FullName()), "google.protobuf.") {
			return "", false
		}
		seen[md.FullName()] = true
		fields := md.Fields()
		for i := 0; i < fields.Len(); i++ {
			fd := fields.Get(i)
			child := fd.Message()
			if fd.IsMap() {
				child = fd.MapValue().Message()
			}
			if child == nil {
				continue
			}
			if p, ok := walk(child, append(path, string(fd.Name()))); ok {
				return p, true
			}
		}
		return "", false
	}
	return walk(md, nil)
}
