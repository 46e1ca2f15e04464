package jetstream

import "testing"

func TestCovers(t *testing.T) {
	for _, tc := range []struct {
		filter, subjects string
		want             bool
	}{
		{"garm.v1.ledger.>", "garm.v1.ledger.*.*", true},
		{"garm.v1.ledger.*.*", "garm.v1.ledger.*.*", true},
		{">", "garm.v1.ledger.*.*", true},
		{"garm.>", "garm.v1.ledger.*.*", true},
		{"*.v1.ledger.*.*", "garm.v1.ledger.*.*", true},
		{"garm.v1.ledger.*.*.>", "garm.v1.ledger.*.*", false},
		{"garm.v1.ledger.*", "garm.v1.ledger.*.*", false},
		{"garm.v1.ledger.acme.*", "garm.v1.ledger.*.*", false},
		{"garm.v1.ledger.*.garmd", "garm.v1.ledger.*.*", false},
		{"garm.v1.ledger.*.*", "garm.v1.ledger.>", false},
		{"garm.v1.ledger.>", "garm.v1.ledger.>", true},
		{"garm.v1.ledger.>", "garm.v1.ledger", false},
		{"garm.v1.audit.>", "garm.v1.ledger.*.*", false},
		{"garm.v1.ledger.acme.garmd", "garm.v1.ledger.acme.garmd", true},
	} {
		if got := covers(tc.filter, tc.subjects); got != tc.want {
			t.Errorf("covers(%q, %q) = %v, want %v", tc.filter, tc.subjects, got, tc.want)
		}
	}
}

func TestLedgerSubjectsAreEveryFiveTokenLedgerSubject(t *testing.T) {
	if ledgerSubjects != "garm.v1.ledger.*.*" {
		t.Errorf("ledgerSubjects = %q", ledgerSubjects)
	}
}
