package natsperm

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go/micro"
)

// Role is what an identity is on the bus.
type Role string

// The roles.
const (
	// RoleGarmd is garmd: it calls tools, writes its streams and spends
	// grants.
	RoleGarmd Role = "garmd"
	// RoleTool is one tool package's services: they answer calls on that
	// package's subjects and nothing else.
	RoleTool Role = "tool"
	// RoleApprovals is the approvals service: it reads approval requests
	// and records decisions on them, and writes its audit rows.
	RoleApprovals Role = "approvals"
	// RoleNobody is everyone else, an agent included: no right at all.
	RoleNobody Role = "nobody"
)

// GarmdUser is garmd's identity name.
const GarmdUser = "garmd"

// InboxRoot is the first token of every garm identity's inbox prefix:
// an identity's inboxes are InboxRoot.<name>.*, so each subscribes to its
// own replies only and no one can read another's.
const InboxRoot = "_INBOX"

// InboxPrefix is the inbox prefix of the named identity, for
// nats.CustomInboxPrefix.
func InboxPrefix(name string) string { return InboxRoot + "." + name }

// ToolUser is the identity name of a tool package's services: "tool_" and
// the proto package with dots as underscores, e.g. tool_calc_v1.
func ToolUser(pkg string) string { return "tool_" + strings.ReplaceAll(pkg, ".", "_") }

// Set is the permissions of everyone on the bus for one catalogue.
type Set struct {
	// Catalogue is the digest of the catalogue they were derived from.
	Catalogue string
	// Identities are garmd, then each tool package in name order.
	Identities []Identity
	// Everyone else is what a user with neither role gets: nothing.
	EveryoneElse Permissions
}

// Identity is one user on the bus and what it may do.
type Identity struct {
	// Name is the user name, GarmdUser or ToolUser(Package).
	Name string
	Role Role
	// Package is a tool identity's proto package; empty for garmd.
	Package string
	// InboxPrefix is where its replies arrive; empty for an identity that
	// makes no request.
	InboxPrefix string
	Permissions Permissions
}

// Permissions are the subjects an identity may publish and subscribe to.
// Subscribe entries may carry a queue group after a space ("subject
// group"), which the server then requires.
type Permissions struct {
	Publish   Rules
	Subscribe Rules
	// Responses lets the identity publish replies to the requests it
	// received, whatever their reply subject, within the server's expiry;
	// nothing else. The number of replies per request is not bounded
	// (ResponsesMax): a service run as n micro instances on one connection
	// answers a discovery request once from each.
	Responses bool
}

// Rules allow and deny subjects; a deny wins over an allow.
type Rules struct {
	Allow []string
	Deny  []string
}

// ResponsesMax is the number of replies to one request the responses
// allowance lets through: -1, any number (the server's and a user JWT's
// spelling of unbounded).
const ResponsesMax = -1

// nothing allows nothing: the rules of everyone else, and the publish
// rules of a tool, which only answers.
var nothing = Rules{Deny: []string{">"}}

// jsAPI is the JetStream API subject of a call on a stream.
func jsAPI(call, stream string) string { return "$JS.API.STREAM." + call + "." + stream }

// kvStream is the stream behind a key-value bucket.
func kvStream(bucket string) string { return "KV_" + bucket }

// userInfoSubject is where a connection asks the server for its own user
// and permissions (garmd's startup check).
const userInfoSubject = "$SYS.REQ.USER.INFO"

// Derive is the permissions of everyone on the bus for the catalogue a.
func Derive(a *artifact.Artifact) *Set {
	byPackage := map[string][]toolService{}
	for _, pkg := range a.Model.Packages {
		for _, svc := range pkg.Services {
			if !svc.HasTools() {
				continue
			}
			ts := toolService{name: wire.ServiceName(string(svc.Desc.FullName()))}
			for _, t := range svc.Tools {
				ts.subjects = append(ts.subjects, subjectQueue{t.Subject, t.QueueGroup})
			}
			byPackage[string(pkg.Name)] = append(byPackage[string(pkg.Name)], ts)
		}
	}
	set := &Set{Catalogue: a.Digest, EveryoneElse: Permissions{Publish: nothing, Subscribe: nothing}}
	set.Identities = append(set.Identities, garmd(byPackage))
	for _, pkg := range slices.Sorted(maps.Keys(byPackage)) {
		set.Identities = append(set.Identities, tool(pkg, byPackage[pkg]))
	}
	return set
}

type toolService struct {
	// name is the micro service name.
	name     string
	subjects []subjectQueue
}

type subjectQueue struct{ subject, queue string }

// garmd may call every tool, write its own streams, spend grants with
// create-only writes and read a spend back, create approval requests and
// read their decisions (never write one), read and raise the highest
// catalogue version served (never forget it), read its streams' and buckets'
// configuration, ask running services who they are, and hear catalogue
// announcements.
func garmd(byPackage map[string][]toolService) Identity {
	var pub []string
	for _, svcs := range byPackage {
		for _, s := range svcs {
			for _, sq := range s.subjects {
				pub = append(pub, sq.subject)
			}
		}
	}
	spent := kvStream(wire.GrantsSpentBucket)
	approvals := kvStream(wire.ApprovalsBucket)
	versions := kvStream(wire.CatalogueVersionsBucket)
	pub = append(pub,
		// The highest signed catalogue version served (--catalogue-keys):
		// garmd reads a record and raises it by compare-and-set.
		"$KV."+wire.CatalogueVersionsBucket+".catalogue.*",
		jsAPI("INFO", versions), directGet(versions), jsAPI("MSG.GET", versions),
		// Approval requests: garmd creates them, their reuse keys, their
		// callers' counts and their tenants' inbox keys, and reads
		// decisions, which it never writes.
		approvalsKeys+"req.>", approvalsKeys+"ask.>", approvalsKeys+"caller.>", approvalsKeys+"inbox.>",
		jsAPI("INFO", approvals), directGet(approvals), jsAPI("MSG.GET", approvals),
		wire.LedgerStreamSubjects, wire.AuditStreamSubjects, wire.NotifyStreamSubjects,
		"$KV."+wire.GrantsSpentBucket+".>",
		jsAPI("INFO", wire.LedgerStream), jsAPI("INFO", wire.AuditStream), jsAPI("INFO", wire.NotifyStream), jsAPI("INFO", spent),
		// Counting limits (garmd --limits): a counter publish on any
		// counter subject, each stream's configuration at start, and the
		// clock counter read back from the per-second stream.
		wire.LimitsSubjects, jsAPI("MSG.GET", wire.LimitSecondStream),
		// Reading back a spend whose answer was lost, from the stream's
		// leader: it names the call that spent the grant.
		jsAPI("MSG.GET", spent),
		"$SRV."+micro.PingVerb.String(), "$SRV."+micro.InfoVerb.String()+".>",
		userInfoSubject,
	)
	// Denied explicitly, although nothing allows them: a later hand-made
	// allow of $JS.API.> must still not let garmd forget a spent grant.
	deny := []string{jsAPI("DELETE", spent), jsAPI("MSG.DELETE", spent), jsAPI("PURGE", spent), jsAPI("UPDATE", spent)}
	deny = append(deny, approvalsKeys+"dec.>")
	for _, s := range wire.LimitStreams() {
		pub = append(pub, jsAPI("INFO", s))
		// A purge or a delete would admit a window twice.
		deny = append(deny, forgetting(s)...)
	}
	deny = append(deny, forgetting(approvals)...)
	deny = append(deny, forgetting(versions)...)
	inbox := InboxPrefix(GarmdUser)
	return Identity{
		Name:        GarmdUser,
		Role:        RoleGarmd,
		InboxPrefix: inbox,
		Permissions: Permissions{
			Publish:   Rules{Allow: sortedUnique(pub), Deny: sortedUnique(deny)},
			Subscribe: Rules{Allow: sortedUnique([]string{inbox + ".>", wire.CataloguePublishedSubject})},
		},
	}
}

// approvalsKeys is the subject prefix of the approvals bucket's keys.
const approvalsKeys = "$KV." + wire.ApprovalsBucket + "."

// directGet is the direct-get API of a stream, which a key-value Get uses.
func directGet(stream string) string { return "$JS.API.DIRECT.GET." + stream + ".>" }

// forgetting are the API subjects that delete, purge or reconfigure a
// stream or a message of it: nobody's by derivation, denied explicitly so
// that a later hand-made allow of $JS.API.> does not grant them.
func forgetting(stream string) []string {
	return []string{jsAPI("DELETE", stream), jsAPI("MSG.DELETE", stream), jsAPI("PURGE", stream), jsAPI("UPDATE", stream)}
}

// ApprovalsUser is the approvals service's identity name.
const ApprovalsUser = "approvals"

// ApprovalsAuditApp is the app token of the approvals service's audit
// rows: it writes them on wire.AuditSubject(tenant, ApprovalsAuditApp).
const ApprovalsAuditApp = "approvals"

// Approvals is the approvals service's identity: it reads the approvals
// bucket (its configuration, its keys, its subject index for the inbox),
// records decisions with create-only writes of dec. keys, writes its
// audit rows for any tenant, and reads GARM_NOTIFY by message gets for its
// feed of notified actions. It creates no request, writes no reuse, count
// or inbox key, calls no tool and touches no other stream or bucket; it
// needs no catalogue, so it is not part of a Set.
//
// It creates no consumer: every consumer API is denied, so it can neither
// have the server deliver a stream to a subject of its choosing nor hold
// consumers without bound. Its inbox lists keys from the stream's subject
// index (a stream info request), which needs none.
func Approvals() Identity {
	approvals := kvStream(wire.ApprovalsBucket)
	inbox := InboxPrefix(ApprovalsUser)
	pub := []string{
		approvalsKeys + "dec.>",
		jsAPI("INFO", approvals), directGet(approvals), jsAPI("MSG.GET", approvals),
		"garm.v1.audit.*." + wire.Token(ApprovalsAuditApp), jsAPI("INFO", wire.AuditStream),
		// The feed of notified actions reads GARM_NOTIFY by message gets (approvals/feed.go).
		jsAPI("INFO", wire.NotifyStream), jsAPI("MSG.GET", wire.NotifyStream), "$JS.API.DIRECT.GET." + wire.NotifyStream,
		userInfoSubject,
	}
	deny := append([]string{
		approvalsKeys + "req.>", approvalsKeys + "ask.>", approvalsKeys + "caller.>", approvalsKeys + "inbox.>",
		consumerAPI,
	}, forgetting(approvals)...)
	return Identity{
		Name:        ApprovalsUser,
		Role:        RoleApprovals,
		InboxPrefix: inbox,
		Permissions: Permissions{
			Publish:   Rules{Allow: sortedUnique(pub), Deny: sortedUnique(deny)},
			Subscribe: Rules{Allow: []string{inbox + ".>"}},
		},
	}
}

// consumerAPI is every JetStream consumer API subject (create, durable
// create, delete, pause, next, ...), denied explicitly so that a later
// hand-made allow of $JS.API.> does not grant them.
const consumerAPI = "$JS.API.CONSUMER.>"

// tool may take its package's calls, in each tool's queue group, and
// answer micro discovery for its own services; it publishes nothing but
// replies.
func tool(pkg string, svcs []toolService) Identity {
	var sub []string
	for _, s := range svcs {
		for _, sq := range s.subjects {
			sub = append(sub, sq.subject+" "+sq.queue)
		}
		for _, verb := range []micro.Verb{micro.PingVerb, micro.InfoVerb, micro.StatsVerb} {
			sub = append(sub, "$SRV."+verb.String(), "$SRV."+verb.String()+"."+s.name, "$SRV."+verb.String()+"."+s.name+".*")
		}
	}
	return Identity{
		Name:    ToolUser(pkg),
		Role:    RoleTool,
		Package: pkg,
		Permissions: Permissions{
			Publish:   nothing,
			Subscribe: Rules{Allow: sortedUnique(sub)},
			Responses: true,
		},
	}
}

// Identity is the identity of the given name, or nil.
func (s *Set) Identity(name string) *Identity {
	i := slices.IndexFunc(s.Identities, func(id Identity) bool { return id.Name == name })
	if i < 0 {
		return nil
	}
	return &s.Identities[i]
}

func sortedUnique(s []string) []string {
	s = slices.Clone(s)
	slices.SortFunc(s, func(a, b string) int { return cmp.Compare(a, b) })
	return slices.Compact(s)
}
