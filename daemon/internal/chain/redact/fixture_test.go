package redact_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/catalogue/cataloguetest"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
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
	return cataloguetest.Message(tb, t.Output, json)
}

func shapeOf(tb testing.TB, clearance toolv1.Clearance, names ...string) call.Shape {
	return call.Shape{Clearance: clearance, Compartments: compartments(tb, names...)}
}

// hashKey keys the hash arm in every test, as --hash-key-file does garmd's;
// tenant is the tenant claim of every caller a test does not name.
var hashKey = []byte("redact-test-hash-key-0123456789")

const tenant = "acme"

const (
	unspecified  = toolv1.Clearance_CLEARANCE_UNSPECIFIED
	internal     = toolv1.Clearance_CLEARANCE_INTERNAL
	confidential = toolv1.Clearance_CLEARANCE_CONFIDENTIAL
	restricted   = toolv1.Clearance_CLEARANCE_RESTRICTED
)

// statementSeconds is 2024-03-17T13:45:30Z, the instant every Timestamp of
// fullStatement starts from.
const statementSeconds = 1710683130

// statementString is the value fullStatement gives Statement's string field
// fd: one its arm transforms, distinct per field.
func statementString(fd protoreflect.FieldDescriptor) string {
	n := fd.Number()
	name, _, _ := strings.Cut(string(fd.Name()), "_")
	switch name {
	case "email":
		return fmt.Sprintf("person.%02d@mail.example", n)
	case "phone":
		return fmt.Sprintf("+44207123%04d", n)
	case "note":
		return fmt.Sprintf("a note of field %02d, longer than eight bytes", n)
	case "card":
		return fmt.Sprintf("4111 1111 1111 %04d", n)
	case "ip":
		return fmt.Sprintf("10.1.2.%d", n)
	case "url":
		return fmt.Sprintf("https://user@x.example:8443/p/%02d?token=secret", n)
	}
	return fmt.Sprintf("%s-VALUE-%02d", strings.ToUpper(string(fd.Name())), n)
}

// fullStatement is get_statement's answer with all fifty fields set.
func fullStatement(tb testing.TB, t *call.Tool) protoreflect.Message {
	tb.Helper()
	m := dynamicpb.NewMessage(t.Output)
	fields := t.Output.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		switch {
		case fd.Kind() == protoreflect.StringKind:
			m.Set(fd, protoreflect.ValueOfString(statementString(fd)))
		case fd.Kind() == protoreflect.Int64Kind:
			m.Set(fd, protoreflect.ValueOfInt64(int64(fd.Number())*1000003))
		case fd.Message() != nil:
			ts := m.Mutable(fd).Message()
			ts.Set(ts.Descriptor().Fields().ByName("seconds"), protoreflect.ValueOfInt64(statementSeconds+int64(fd.Number())))
			ts.Set(ts.Descriptor().Fields().ByName("nanos"), protoreflect.ValueOfInt32(int32(fd.Number())))
		default:
			tb.Fatalf("Statement's %s is of a kind fullStatement does not fill", fd.Name())
		}
	}
	return m
}
