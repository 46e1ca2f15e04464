package ledger_test

import (
	"regexp"
	"testing"
	"time"

	rowstep "github.com/garm-dev/garm/daemon/internal/chain/ledger"
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
