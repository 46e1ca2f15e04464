package jetstream

import "testing"

func TestLedgerSubjectsAreEveryFiveTokenLedgerSubject(t *testing.T) {
	if ledgerSubjects != "garm.v1.ledger.*.*" {
		t.Errorf("ledgerSubjects = %q", ledgerSubjects)
	}
}
