package listing_test

import (
	"bytes"
	"slices"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/catalogue/cataloguetest"
	"github.com/garm-dev/garm/daemon/internal/listing"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

// Page is the structured accessor a second encoding (MCP) lists with: its
// pages, read to the end at any page size, must be List tool for tool and
// schema for schema.
func TestPagesReadToTheEndAreTheListingToolForToolAndSchemaForSchema(t *testing.T) {
	g := cataloguetest.Load(t, deskFixture)
	all := []toolv1.Verb{read, write, destructive}
	callers := map[string]caller{
		"everyone":     everyone,
		"read only":    {clearance: restricted, verbs: []toolv1.Verb{read}, compartments: []string{"vip"}},
		"public":       {clearance: public, verbs: all, compartments: []string{"pii", "vip"}},
		"scope ops":    {clearance: restricted, verbs: all, compartments: []string{"vip"}, scope: []string{"ops"}},
		"sees nothing": {clearance: restricted},
	}
	for name, c := range callers {
		for _, audience := range []toolv1.Audience{agent, runner} {
			for _, size := range []int{1, 2, 3, 100} {
				l := listing.New(listing.Options{})
				p := c.principal(t, g)
				body, err := l.List(g, p, audience)
				if err != nil {
					t.Fatal(err)
				}
				want := decode(t, body)
				var got []listing.Entry
				for from, pages := 0, 0; from >= 0; pages++ {
					if pages > len(g.Tools) {
						t.Fatalf("%s: the pages never end", name)
					}
					page, next, err := l.Page(g, p, audience, from, size)
					if err != nil {
						t.Fatal(err)
					}
					if len(page) > size || (next >= 0 && len(page) != size) {
						t.Fatalf("%s, size %d: a page of %d, next %d", name, size, len(page), next)
					}
					got = append(got, page...)
					from = next
				}
				if len(got) != len(want.Tools) {
					t.Fatalf("%s %s size %d: paged %d tools, listed %d", name, audience, size, len(got), len(want.Tools))
				}
				for i, e := range got {
					if e.Tool.FQN != want.Tools[i].FQN || !bytes.Equal(e.InputSchema, want.Tools[i].InputSchema) {
						t.Fatalf("%s size %d: entry %d is %s with %s, listed %s with %s", name, size, i, e.Tool.FQN, e.InputSchema, want.Tools[i].FQN, want.Tools[i].InputSchema)
					}
				}
			}
		}
	}
}

func TestAPageStartsWhereThePreviousEnded(t *testing.T) {
	g := cataloguetest.Load(t, deskFixture)
	l := listing.New(listing.Options{})
	p := everyone.principal(t, g)
	first, next, err := l.Page(g, p, agent, 0, 2)
	if err != nil || next < 0 {
		t.Fatalf("%v, next %d", err, next)
	}
	second, _, err := l.Page(g, p, agent, next, 2)
	if err != nil {
		t.Fatal(err)
	}
	names := func(es []listing.Entry) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.Tool.FQN)
		}
		return out
	}
	if got := append(names(first), names(second)...); !slices.Equal(got, []string{"desk.v1.legacy", "desk.v1.lookup", "desk.v1.purge", "desk.v1.update_contact"}) {
		t.Fatalf("%v", got)
	}
	if _, _, err := l.Page(g, p, agent, 0, 0); err == nil {
		t.Fatal("a page of no entries was answered")
	}
}
