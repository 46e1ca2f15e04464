package input_test

import (
	"testing"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/catalogue/cataloguetest"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// fixture is testdata/update.proto (the write check's) and
// testdata/validate.proto (validation's), built and loaded as garmd loads a
// catalogue.
var fixture = cataloguetest.NewFixture("testdata")

func compartments(tb testing.TB, names ...string) call.Compartments {
	return fixture.Compartments(tb, names...)
}

func tool(tb testing.TB, name string) *call.Tool { return fixture.Tool(tb, name) }

// request is t's input message, built from the catalogue's descriptors as
// garmd builds it, holding the given protojson.
func request(tb testing.TB, t *call.Tool, json string) protoreflect.Message {
	tb.Helper()
	return cataloguetest.Message(tb, t.Input, json)
}

// principal is a caller of the given clearance and compartments, running
// under the given exec subject (empty: no exec claim).
func principal(tb testing.TB, exec string, clearance toolv1.Clearance, names ...string) *call.Principal {
	return &call.Principal{
		Subject:          "user:ada",
		Clearance:        clearance,
		Compartments:     compartments(tb, names...),
		CompartmentNames: names,
		Verbs:            call.VerbsOf(toolv1.Verb_VERB_WRITE),
		ExecutionSubject: exec,
	}
}

const (
	unspecified  = toolv1.Clearance_CLEARANCE_UNSPECIFIED
	internal     = toolv1.Clearance_CLEARANCE_INTERNAL
	confidential = toolv1.Clearance_CLEARANCE_CONFIDENTIAL
	restricted   = toolv1.Clearance_CLEARANCE_RESTRICTED
)
