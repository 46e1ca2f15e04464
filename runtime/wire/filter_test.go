package wire_test

import (
	"testing"

	"github.com/garm-dev/garm/runtime/wire"
)

func TestCoversAsksWhetherAFilterTakesEverySubjectOfAnother(t *testing.T) {
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
		{"garm.v1.notify.>", "garm.v1.notify.*.>", true},
		{"garm.v1.notify.*.*.>", "garm.v1.notify.*.>", false},
	} {
		if got := wire.Covers([]string{"other.>", tc.filter}, tc.subjects); got != tc.want {
			t.Errorf("Covers(%q, %q) = %v, want %v", tc.filter, tc.subjects, got, tc.want)
		}
	}
	if wire.Covers(nil, "garm.v1.ledger.*.*") {
		t.Error("no filter covers anything")
	}
}
