package devplane_test

import (
	"strings"
	"testing"
	"unicode"

	"github.com/garm-dev/garm/devkit/devplane"
	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// What a caller names reaches a row (a tool that does not exist is
// recorded as named; a subject as its token says): on the ledger tail it
// cannot start a line of its own, forge a column, or hide behind
// invisible characters.
func TestTheLedgerTailPrintsNoCallerTextRaw(t *testing.T) {
	t.Parallel()
	forged := "calc.v1.add ok\nledger 00:00:00.000 ok     calc.v1.add user:x"
	e := &ledgerv1.Event{
		Time:             timestamppb.Now(),
		Outcome:          "denied",
		Tool:             forged,
		PrincipalSubject: "user:a\u202eevil\u200b",
		PrincipalActor:   "agent b\x1b[31m",
		ErrorKind:        "not_found",
		ErrorDetail:      "no tool \"" + forged + "\"\r",
	}
	line := devplane.LedgerLine(e)
	if strings.ContainsFunc(line, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }) {
		t.Errorf("the line holds a control or invisible character: %q", line)
	}
	for _, want := range []string{`"calc.v1.add ok\nledger`, `"user:a\u202eevil\u200b"`, `via "agent b\x1b[31m"`, "code=not_found", `detail="no tool \"calc.v1.add ok\nledger`} {
		if !strings.Contains(line, want) {
			t.Errorf("the line lacks %s: %s", want, line)
		}
	}
	plain := devplane.LedgerLine(&ledgerv1.Event{Time: timestamppb.Now(), Outcome: "ok", Tool: "calc.v1.add", PrincipalSubject: "user:sam@acme-bank.example"})
	if !strings.Contains(plain, " ok     calc.v1.add user:sam@acme-bank.example redacted=0") {
		t.Errorf("a plain row is not printed plainly: %s", plain)
	}
}
