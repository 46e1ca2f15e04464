package wire

import "strings"

// Streams, their subjects and the key-value bucket garm writes to.
const (
	// LedgerStream holds the ledger, on LedgerSubject subjects.
	LedgerStream = "GARM_LEDGER"
	// LedgerStreamSubjects is the subject filter of LedgerStream.
	LedgerStreamSubjects = "garm.v1.ledger.>"
	// AuditStream holds the audit rows of LEVEL_AUDIT tools, on AuditSubject
	// subjects.
	AuditStream = "GARM_AUDIT"
	// AuditStreamSubjects is the subject filter of AuditStream.
	AuditStreamSubjects = "garm.v1.audit.>"
	// NotifyStream holds the rows of MODE_NOTIFY tools for a human on the
	// loop, on NotifySubject subjects.
	NotifyStream = "GARM_NOTIFY"
	// NotifyStreamSubjects is the subject filter of NotifyStream.
	NotifyStreamSubjects = "garm.v1.notify.>"
	// GrantsSpentBucket is the key-value bucket where approval grants are
	// spent.
	GrantsSpentBucket = "GARM_GRANTS_SPENT"
	// ApprovalsBucket is the key-value bucket of approval requests and
	// their decisions (approvals/pending).
	ApprovalsBucket = "GARM_APPROVALS"
	// LimitsSubjects are the subjects of garmd's limit counters, under
	// one stream per window: LimitStreams.
	LimitsSubjects = "garm.limits.>"
	// The counter streams garmd --limits counts calls on, by window, and
	// the stream of concurrency bounds' counts.
	LimitSecondStream      = "GARM_LIMITS_SECOND"
	LimitMinuteStream      = "GARM_LIMITS_MINUTE"
	LimitHourStream        = "GARM_LIMITS_HOUR"
	LimitDayStream         = "GARM_LIMITS_DAY"
	LimitConcurrencyStream = "GARM_LIMITS_CONCURRENCY"
	// CatalogueVersionsBucket is the key-value bucket of the highest signed
	// catalogue version each catalogue name has served, which every replica
	// reads and raises so that none serves an older one (decision 0136).
	CatalogueVersionsBucket = "GARM_CATALOGUE_VERSIONS"
	// CataloguePublishedSubject is where a newly published catalogue is
	// announced.
	CataloguePublishedSubject = "garm.v1.catalogue.published"
)

// LimitStreams are the counter streams, the second's first: it also holds
// the clock counter garmd reads the bus's time from.
func LimitStreams() []string {
	return []string{LimitSecondStream, LimitMinuteStream, LimitHourStream, LimitDayStream, LimitConcurrencyStream}
}

// LedgerSubject is the subject of a tenant's ledger rows written by app.
func LedgerSubject(tenant, app string) string {
	return "garm.v1.ledger." + Token(tenant) + "." + Token(app)
}

// AuditSubject is the subject of a tenant's audit rows written by app.
func AuditSubject(tenant, app string) string {
	return "garm.v1.audit." + Token(tenant) + "." + Token(app)
}

// NotifySubject is the subject of a tenant's notifications for the tool fqn.
// The FQN keeps its dotted structure, each of its parts a Token, so a
// subscriber can filter by proto package: "garm.v1.notify.acme.payments.v1.>"
// is every payments.v1 tool of tenant acme.
func NotifySubject(tenant, fqn string) string {
	parts := strings.Split(fqn, ".")
	for i, part := range parts {
		parts[i] = Token(part)
	}
	return "garm.v1.notify." + Token(tenant) + "." + strings.Join(parts, ".")
}

// tokenReplacer maps every character that would end, split or widen a
// subject token to "_".
var tokenReplacer = strings.NewReplacer(
	".", "_", "*", "_", ">", "_", " ", "_", "\t", "_", "\r", "_", "\n", "_",
)

// Token makes s one literal subject token: ".", "*", ">", space, tab, CR and
// LF become "_", and an empty s becomes "_". Two values that differ only in
// those characters share a token; what a caller sends can never make a
// wildcard, an empty token or a second token.
func Token(s string) string {
	if s == "" {
		return "_"
	}
	return tokenReplacer.Replace(s)
}
