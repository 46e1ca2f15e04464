package wire_test

import (
	"testing"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/runtime/wire"
)

func TestClearanceSpellingsAndOrder(t *testing.T) {
	for _, tc := range []struct {
		spelling string
		want     toolv1.Clearance
		ok       bool
	}{
		{"INTERNAL", toolv1.Clearance_CLEARANCE_INTERNAL, true},
		{"clearance_confidential", toolv1.Clearance_CLEARANCE_CONFIDENTIAL, true},
		{"Restricted", toolv1.Clearance_CLEARANCE_RESTRICTED, true},
		{"UNSPECIFIED", 0, false},
		{"", 0, false},
		{"ınternal", 0, false}, // dotless i: no Unicode folding
		{"SECRETISH", 0, false},
	} {
		got, ok := wire.ParseClearance(tc.spelling)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseClearance(%q) = %v, %v; want %v, %v", tc.spelling, got, ok, tc.want, tc.ok)
		}
	}
	internal, confidential := toolv1.Clearance_CLEARANCE_INTERNAL, toolv1.Clearance_CLEARANCE_CONFIDENTIAL
	if !wire.ClearanceAllows(confidential, internal) || wire.ClearanceAllows(internal, confidential) {
		t.Error("a higher clearance must allow a lower need, and not the reverse")
	}
	if wire.ClearanceAllows(toolv1.Clearance_CLEARANCE_UNSPECIFIED, internal) || wire.ClearanceAllows(confidential, toolv1.Clearance_CLEARANCE_UNSPECIFIED) {
		t.Error("unspecified on either side never allows")
	}
}
