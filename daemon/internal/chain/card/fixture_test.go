package card_test

import (
	"testing"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/catalogue/cataloguetest"
	"github.com/garm-dev/garm/daemon/internal/chain/card"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// fixture is testdata/cards.proto built and loaded as garmd loads a catalogue.
var fixture = cataloguetest.NewFixture("testdata")

func tool(tb testing.TB, name string) *call.Tool { return fixture.Tool(tb, name) }

// numbering is the fixture generation's numbering, as the chain hands it to
// Project.
func numbering(tb testing.TB) card.Numbering {
	g := fixture.Generation(tb)
	return func(names []string) (call.Compartments, bool) {
		set, _, dropped := g.CompartmentSet(names)
		return set, len(dropped) == 0
	}
}

// answer is t's output message, built from the catalogue's descriptors as
// garmd builds it, holding the given protojson.
func answer(tb testing.TB, t *call.Tool, json string) *dynamicpb.Message {
	tb.Helper()
	return cataloguetest.Message(tb, t.Output, json)
}

func shapeOf(tb testing.TB, clearance toolv1.Clearance, names ...string) call.Shape {
	return call.Shape{Clearance: clearance, Compartments: fixture.Compartments(tb, names...)}
}

// assertAnswer fails unless got holds exactly want's protojson.
func assertAnswer(tb testing.TB, got protoreflect.Message, want string) {
	tb.Helper()
	w := dynamicpb.NewMessage(got.Descriptor())
	if err := protojson.Unmarshal([]byte(want), w); err != nil {
		tb.Fatalf("want %s: %v", want, err)
	}
	if !proto.Equal(got.Interface(), w) {
		tb.Fatalf("projected answer\n got %s\nwant %s", protojson.Format(got.Interface()), protojson.Format(w))
	}
}

const (
	unspecified  = toolv1.Clearance_CLEARANCE_UNSPECIFIED
	public       = toolv1.Clearance_CLEARANCE_PUBLIC
	internal     = toolv1.Clearance_CLEARANCE_INTERNAL
	confidential = toolv1.Clearance_CLEARANCE_CONFIDENTIAL
	restricted   = toolv1.Clearance_CLEARANCE_RESTRICTED
)

// TestTheFixtureFloorsAreTheCataloguesJoin pins what the table relies on:
// each tool's CardFloor is its gate joined with its output's default
// policy, as the catalogue computes it.
func TestTheFixtureFloorsAreTheCataloguesJoin(t *testing.T) {
	for name, want := range map[string]call.Label{
		"get_card":    {Clearance: internal},
		"get_holder":  {Clearance: internal},
		"list_cards":  {Clearance: internal},
		"map_cards":   {Clearance: internal},
		"get_page":    {Clearance: internal},
		"get_dossier": {Clearance: confidential, Compartments: fixture.Compartments(t, "pii")},
	} {
		if got := tool(t, name).CardFloor; got != want {
			t.Errorf("%s: CardFloor %+v, want %+v", name, got, want)
		}
	}
}
