package redact_test

import (
	"sync"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/catalogue/cataloguetest"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// loaded is testdata/accounts.proto built and loaded as garmd loads a
// catalogue, once per test binary; a failed load is tried again, so every
// test that needs it fails with the reason.
var loaded struct {
	sync.Mutex
	gen *catalogue.Generation
}

func generation(tb testing.TB) *catalogue.Generation {
	tb.Helper()
	loaded.Lock()
	defer loaded.Unlock()
	if loaded.gen == nil {
		loaded.gen = cataloguetest.Load(tb, "testdata")
	}
	return loaded.gen
}

// compartments numbers names as the fixture's generation does.
func compartments(tb testing.TB, names ...string) call.Compartments {
	tb.Helper()
	set, _, dropped := generation(tb).CompartmentSet(names)
	if len(dropped) > 0 {
		tb.Fatalf("the fixture declares no compartment %q", dropped)
	}
	return set
}

// tool is the fixture's tool of the given short name, as its generation
// serves it. It is shared by every test: copy it before changing it.
func tool(tb testing.TB, name string) *call.Tool {
	tb.Helper()
	for _, t := range generation(tb).Tools {
		if t.Name == name {
			return t
		}
	}
	tb.Fatalf("the fixture has no tool %q", name)
	return nil
}

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
