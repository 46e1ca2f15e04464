package listing_test

import (
	"slices"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/catalogue/cataloguetest"
	"github.com/garm-dev/garm/daemon/internal/listing"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

// Listed for agents, the desk's tools are legacy (PUBLIC READ, support),
// lookup (PUBLIC READ, support), purge (RESTRICTED DESTRUCTIVE, ops),
// update_contact (INTERNAL WRITE, support and ops) and whisper (INTERNAL
// READ in vip, no set); run_job is for runners only.
func TestTheListingNeverShowsAToolTheCallerMayNotSee(t *testing.T) {
	g := cataloguetest.Load(t, deskFixture)
	all := []toolv1.Verb{read, write, destructive}
	cases := []struct {
		gate   string
		caller caller
		want   []string
	}{
		{"every gate open", everyone, []string{"desk.v1.legacy", "desk.v1.lookup", "desk.v1.purge", "desk.v1.update_contact", "desk.v1.whisper"}},
		{"verb: read only", caller{clearance: restricted, verbs: []toolv1.Verb{read}, compartments: []string{"vip"}}, []string{"desk.v1.legacy", "desk.v1.lookup", "desk.v1.whisper"}},
		{"verb: destructive does not imply write", caller{clearance: restricted, verbs: []toolv1.Verb{destructive}}, []string{"desk.v1.purge"}},
		{"verb: none held", caller{clearance: restricted}, []string{}},
		{"clearance: public", caller{clearance: public, verbs: all, compartments: []string{"pii", "vip"}}, []string{"desk.v1.legacy", "desk.v1.lookup"}},
		{"clearance: unspecified sees nothing", caller{verbs: all}, []string{}},
		{"compartments: without vip", caller{clearance: restricted, verbs: all, compartments: []string{"pii"}}, []string{"desk.v1.legacy", "desk.v1.lookup", "desk.v1.purge", "desk.v1.update_contact"}},
		{"scope: support", caller{clearance: restricted, verbs: all, compartments: []string{"vip"}, scope: []string{"support"}}, []string{"desk.v1.legacy", "desk.v1.lookup", "desk.v1.update_contact"}},
		{"scope: ops", caller{clearance: restricted, verbs: all, compartments: []string{"vip"}, scope: []string{"ops"}}, []string{"desk.v1.purge", "desk.v1.update_contact"}},
		{"scope: empty reaches nothing", caller{clearance: restricted, verbs: all, compartments: []string{"vip"}, scope: []string{}}, []string{}},
	}
	for _, tc := range cases {
		t.Run(tc.gate, func(t *testing.T) {
			body, err := listing.New(listing.Options{}).List(g, tc.caller.principal(t, g), agent)
			if err != nil {
				t.Fatal(err)
			}
			l := decode(t, body)
			if got := l.fqns(); !slices.Equal(got, tc.want) {
				t.Fatalf("listed %v, want %v", got, tc.want)
			}
			if l.Digest != g.Digest || l.Tools == nil {
				t.Fatalf("digest %q, tools %v", l.Digest, l.Tools)
			}
		})
	}
}
