package ledger_test

import (
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	rowstep "github.com/garm-dev/garm/daemon/internal/chain/ledger"
	"github.com/garm-dev/garm/daemon/internal/deny"
	"google.golang.org/protobuf/proto"
)

var uuidV7 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestEventIDsAreDistinctTimeOrderedUUIDv7s(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	seen := map[string]bool{}
	prev := ""
	for i := range 1000 {
		id := rowstep.NewEventID(t0.Add(time.Duration(i) * time.Millisecond))
		if !uuidV7.MatchString(id) {
			t.Fatalf("%q is not a UUIDv7", id)
		}
		if seen[id] {
			t.Fatalf("%q minted twice", id)
		}
		seen[id] = true
		if id[:13] < prev {
			t.Fatalf("%q sorts before %q, minted earlier", id, prev)
		}
		prev = id[:13]
	}
}

func TestARowOpensDeniedWithTheRouteAsToolAndMethod(t *testing.T) {
	e := rowstep.Open("id", time.Unix(0, 0), "/calc.v1.Calculator/Add", "v1.2.3")
	if e.GetOutcome() != "denied" || e.GetTool() != "/calc.v1.Calculator/Add" || e.GetMethod() != "/calc.v1.Calculator/Add" ||
		e.GetApp() != "garmd" || e.GetDaemonVersion() != "v1.2.3" {
		t.Fatalf("row opened as %v", e)
	}
}

func TestARowRecordsACallersPathBoundedAndValid(t *testing.T) {
	long := "/" + strings.Repeat("é", 400)
	e := rowstep.Open("id", time.Unix(0, 0), long, "v")
	if len(e.GetTool()) > 260 || !utf8.ValidString(e.GetTool()) || !strings.HasSuffix(e.GetTool(), "…") {
		t.Fatalf("tool column %d bytes: %q", len(e.GetTool()), e.GetTool())
	}
	bad := rowstep.Open("id", time.Unix(0, 0), "/a\xffb", "v")
	if !utf8.ValidString(bad.GetMethod()) {
		t.Fatalf("method column %q", bad.GetMethod())
	}
	if _, err := proto.Marshal(bad); err != nil {
		t.Fatalf("the row does not marshal: %v", err)
	}
}

func TestARowRecordsADetailBoundedAndValid(t *testing.T) {
	e := rowstep.Open("id", time.Unix(0, 0), "/p", "v")
	rowstep.Finish(e, deny.Deny(deny.InvalidArgument, strings.Repeat("violation é; ", 2000)+"\xff"), time.Millisecond)
	if d := e.GetErrorDetail(); len(d) > 4<<10+len("…") || !utf8.ValidString(d) || !strings.HasSuffix(d, "…") {
		t.Fatalf("detail of %d bytes, valid %v", len(d), utf8.ValidString(d))
	}
	rowstep.Finish(e, deny.Deny(deny.InvalidArgument, "a\xffb"), time.Millisecond)
	if d := e.GetErrorDetail(); d != "a\uFFFDb" {
		t.Fatalf("detail %q", d)
	}
	if _, err := proto.Marshal(e); err != nil {
		t.Fatalf("the row does not marshal: %v", err)
	}
}

func TestARowRecordsTheClientsNameBoundedPrintableAndValid(t *testing.T) {
	cases := []struct{ name, given, want string }{
		{"plain", "claude-code", "claude-code"},
		{"none", "", ""},
		{"a newline cannot forge a log line", "cli\nfake=row", "cli\uFFFDfake=row"},
		{"escape sequences", "a\x1b[31mred", "a\uFFFD[31mred"},
		{"C1 and separators", "a\u0085b\u2028c", "a\uFFFDb\uFFFDc"},
		{"invalid UTF-8", "a\xffb", "a\uFFFDb"},
	}
	for _, c := range cases {
		e := rowstep.Open("id", time.Now(), "/mcp", "v")
		rowstep.Surface(e, "mcp", c.given)
		if e.Surface != "mcp" || e.ClientName != c.want {
			t.Errorf("%s: surface %q, client %q, want %q", c.name, e.Surface, e.ClientName, c.want)
		}
	}
	e := rowstep.Open("id", time.Now(), "/mcp", "v")
	rowstep.Surface(e, "mcp", strings.Repeat("é", 200))
	if len(e.ClientName) > 128+len("…") || !utf8.ValidString(e.ClientName) || !strings.HasSuffix(e.ClientName, "…") {
		t.Fatalf("a long name is recorded as %d bytes: %q", len(e.ClientName), e.ClientName)
	}
}

func TestARowRecordsWhatTheInstanceRulesDecided(t *testing.T) {
	e := rowstep.Open("id", time.Unix(0, 0), "/bank.v1.Bank/GetBalance", "v")
	rowstep.Instance(e, "own_customer", 3, []string{"own_accounts"}, []string{"require:cap"}, "absent_attribute")
	if e.GetInstanceRule() != "own_customer" || e.GetRowsFiltered() != 3 || e.GetRuleErrorClass() != "absent_attribute" ||
		strings.Join(e.GetFiltersApplied(), ",") != "own_accounts" || strings.Join(e.GetAuditOnlyVerdicts(), ",") != "require:cap" {
		t.Fatalf("row %v", e)
	}
	if _, err := proto.Marshal(e); err != nil {
		t.Fatal(err)
	}
}
