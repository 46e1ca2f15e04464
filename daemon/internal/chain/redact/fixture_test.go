package redact_test

import (
	"testing"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/catalogue/cataloguetest"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// fixture is testdata/accounts.proto built and loaded as garmd loads a catalogue.
var fixture = cataloguetest.NewFixture("testdata")

func compartments(tb testing.TB, names ...string) call.Compartments {
	return fixture.Compartments(tb, names...)
}

func tool(tb testing.TB, name string) *call.Tool { return fixture.Tool(tb, name) }

// answer is t's output message, built from the catalogue's descriptors as
// garmd builds it, holding the given protojson.
func answer(tb testing.TB, t *call.Tool, json string) protoreflect.Message {
	tb.Helper()
	m := dynamicpb.NewMessage(t.Output)
	if err := protojson.Unmarshal([]byte(json), m); err != nil {
		tb.Fatalf("answer %s: %v", json, err)
	}
	return m
}

func shapeOf(tb testing.TB, clearance toolv1.Clearance, names ...string) call.Shape {
	return call.Shape{Clearance: clearance, Compartments: compartments(tb, names...)}
}

const (
	unspecified  = toolv1.Clearance_CLEARANCE_UNSPECIFIED
	internal     = toolv1.Clearance_CLEARANCE_INTERNAL
	confidential = toolv1.Clearance_CLEARANCE_CONFIDENTIAL
	restricted   = toolv1.Clearance_CLEARANCE_RESTRICTED
)
