package wire_test

import (
	"strings"
	"testing"

	"github.com/garm-dev/garm/runtime/wire"
)

func TestTokenReplacesEverythingThatWouldSplitOrWidenASubject(t *testing.T) {
	tests := []struct{ in, want string }{
		{"acme", "acme"},
		{"", "_"},
		{"a.b", "a_b"},
		{"*", "_"},
		{">", "_"},
		{"a b\tc\rd\ne", "a_b_c_d_e"},
		{"acme.*.>", "acme____"},
		{"ünïcode-ok_1", "ünïcode-ok_1"},
		{"..", "__"},
	}
	for _, tt := range tests {
		if got := wire.Token(tt.in); got != tt.want {
			t.Errorf("Token(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestStreamSubjectsFollowTheSpec(t *testing.T) {
	tests := []struct{ name, got, want string }{
		{"ledger", wire.LedgerSubject("acme", "garmd"), "garm.v1.ledger.acme.garmd"},
		{"audit", wire.AuditSubject("acme", "garmd"), "garm.v1.audit.acme.garmd"},
		{"notify", wire.NotifySubject("acme", "payments.v1.initiate_payment"), "garm.v1.notify.acme.payments.v1.initiate_payment"},
		{"ledger, hostile tenant", wire.LedgerSubject("a.>", ""), "garm.v1.ledger.a__._"},
		{"audit, empty tenant", wire.AuditSubject("", "garmd"), "garm.v1.audit._.garmd"},
		{"notify, hostile FQN parts", wire.NotifySubject("t *", "p.*.x y"), "garm.v1.notify.t__.p._.x_y"},
		{"notify, empty FQN parts", wire.NotifySubject("t", ".a.."), "garm.v1.notify.t._.a._._"},
		{"notify, empty FQN", wire.NotifySubject("t", ""), "garm.v1.notify.t._"},
		{"ledger stream", wire.LedgerStream, "GARM_LEDGER"},
		{"audit stream", wire.AuditStream, "GARM_AUDIT"},
		{"notify stream", wire.NotifyStream, "GARM_NOTIFY"},
		{"grants bucket", wire.GrantsSpentBucket, "GARM_GRANTS_SPENT"},
		{"catalogue hint", wire.CataloguePublishedSubject, "garm.v1.catalogue.published"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}

func TestEveryStreamSubjectFallsUnderItsStreamsFilter(t *testing.T) {
	tests := []struct{ subject, filter string }{
		{wire.LedgerSubject("", "."), wire.LedgerStreamSubjects},
		{wire.AuditSubject("*", ">"), wire.AuditStreamSubjects},
		{wire.NotifySubject(" ", "a.b.c"), wire.NotifyStreamSubjects},
	}
	for _, tt := range tests {
		if !strings.HasPrefix(tt.subject, strings.TrimSuffix(tt.filter, ">")) {
			t.Errorf("%q is not under %q", tt.subject, tt.filter)
		}
	}
}

// No value a caller controls can make a subject with a wildcard, an empty
// token or whitespace, and the tenant and app are always exactly one token.
func TestNoCallerValueMakesAWildcardOrAnExtraToken(t *testing.T) {
	hostile := []string{"", ".", "..", "*", ">", "a.*", "a.>", " ", "\t", "\r\n", "a b", "x.y.z", "*.>"}
	for _, tenant := range hostile {
		for _, app := range hostile {
			for _, subject := range []string{wire.LedgerSubject(tenant, app), wire.AuditSubject(tenant, app)} {
				tokens := strings.Split(subject, ".")
				if len(tokens) != 5 {
					t.Errorf("%q has %d tokens, want 5", subject, len(tokens))
				}
				checkLiteral(t, subject)
			}
			checkLiteral(t, wire.NotifySubject(tenant, app))
			if got := len(strings.Split(wire.NotifySubject(tenant, "p.v1.tool"), ".")); got != 7 {
				t.Errorf("notify subject for tenant %q has %d tokens, want 7", tenant, got)
			}
		}
	}
}

func checkLiteral(t *testing.T, subject string) {
	t.Helper()
	for _, token := range strings.Split(subject, ".") {
		if token == "" || token == "*" || token == ">" || strings.ContainsAny(token, " \t\r\n*>") {
			t.Errorf("subject %q has token %q", subject, token)
		}
	}
}
