package listing_test

import (
	"slices"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/catalogue/cataloguetest"
	"github.com/garm-dev/garm/daemon/internal/listing"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

func TestEachAudienceIsListedTheToolsDeclaredForIt(t *testing.T) {
	g := cataloguetest.Load(t, deskFixture)
	l := listing.New(listing.Options{})
	cases := []struct {
		asked toolv1.Audience
		want  []string
	}{
		{agent, []string{"desk.v1.legacy", "desk.v1.lookup", "desk.v1.purge", "desk.v1.update_contact", "desk.v1.whisper"}},
		{toolv1.Audience_AUDIENCE_UNSPECIFIED, []string{"desk.v1.legacy", "desk.v1.lookup", "desk.v1.purge", "desk.v1.update_contact", "desk.v1.whisper"}},
		{person, []string{"desk.v1.lookup"}},
		{runner, []string{"desk.v1.run_job"}},
	}
	for _, tc := range cases {
		body, err := l.List(g, everyone.principal(t, g), tc.asked)
		if err != nil {
			t.Fatal(err)
		}
		if got := decode(t, body).fqns(); !slices.Equal(got, tc.want) {
			t.Errorf("%v: listed %v, want %v", tc.asked, got, tc.want)
		}
	}
	body, err := l.List(g, everyone.principal(t, g), person)
	if err != nil {
		t.Fatal(err)
	}
	if got := decode(t, body).Tools[0].Audience; !slices.Equal(got, []string{"AUDIENCE_PERSON", "AUDIENCE_AGENT"}) {
		t.Errorf("lookup's audience is listed as %v, as declared", got)
	}
	if _, err := l.List(g, everyone.principal(t, g), toolv1.Audience(9)); err == nil {
		t.Error("an audience with no name was listed")
	}
}
