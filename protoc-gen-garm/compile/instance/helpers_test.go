package instance_test

import (
	"sync"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/protoc-gen-garm/compile/instance"
	"github.com/garm-dev/garm/protoc-gen-garm/internal/fixture"
)

const fixtureProto = `
syntax = "proto3";
package garm.test.instance;
import "buf/validate/validate.proto";

message Item {
  string owner = 1 [(buf.validate.field).string.max_len = 32];
  int64 amount = 2;
}

message Request {
  string account_id = 1 [(buf.validate.field).string.max_len = 32];
  int64 amount = 2;
  repeated Item items = 3 [(buf.validate.field).repeated.max_items = 100];
  string free = 4;
  repeated string tags = 5;
  map<string, string> labels = 6 [(buf.validate.field).map = {max_pairs: 8, keys: {string: {max_len: 16}}, values: {string: {max_len: 16}}}];
  Item item = 7;
  repeated Item many = 8 [(buf.validate.field).repeated.max_items = 100000];
  uint64 count = 9;
}

message Response {
  string owner = 1 [(buf.validate.field).string.max_len = 32];
  repeated Item rows = 2 [(buf.validate.field).repeated.max_items = 100];
}
`

var (
	fixtureOnce sync.Once
	fixtureFile protoreflect.FileDescriptor
)

func messages(t testing.TB) (request, response, item protoreflect.MessageDescriptor) {
	t.Helper()
	fixtureOnce.Do(func() {
		fixtureFile = fixture.Compile(t, map[string]string{"instance.proto": fixtureProto}, nil, "instance.proto")[0]
	})
	ms := fixtureFile.Messages()
	return ms.ByName("Request"), ms.ByName("Response"), ms.ByName("Item")
}

// bankAttributes are the example bank's declarations.
var bankAttributes = []*toolv1.Attribute{
	{Name: "customer_id", Description: "The customer the caller is.", Type: toolv1.Attribute_TYPE_STRING, MaxLen: 32},
	{Name: "accounts", Description: "The accounts the caller may act on.", Type: toolv1.Attribute_TYPE_STRING_LIST, MaxItems: 64, MaxLen: 32},
	{Name: "cap", Description: "The most an agent may pay per call.", Type: toolv1.Attribute_TYPE_INT},
	{Name: "vip", Description: "Whether the caller is a VIP.", Type: toolv1.Attribute_TYPE_BOOL},
}

func newEnv(t testing.TB) *instance.Env {
	t.Helper()
	env, err := instance.NewEnv(instance.Declarations{Attributes: bankAttributes, Compartments: 4})
	if err != nil {
		t.Fatal(err)
	}
	return env
}

func require(t testing.TB) instance.Target {
	req, _, _ := messages(t)
	return instance.Target{Phase: planv1.RulePhase_RULE_PHASE_REQUIRE, Request: req}
}

func reveal(t testing.TB) instance.Target {
	req, resp, _ := messages(t)
	return instance.Target{Phase: planv1.RulePhase_RULE_PHASE_REVEAL, Request: req, Answer: resp}
}

func filter(t testing.TB) instance.Target {
	req, _, item := messages(t)
	return instance.Target{Phase: planv1.RulePhase_RULE_PHASE_FILTER, Request: req, Answer: item}
}

func compile(t testing.TB, env *instance.Env, target instance.Target, expr string) *instance.Program {
	t.Helper()
	p, err := env.Compile(target, expr)
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return p
}

// message builds a dynamic message of md with string, int64 and repeated
// string fields set from values.
func message(md protoreflect.MessageDescriptor, values map[string]any) *dynamicpb.Message {
	m := dynamicpb.NewMessage(md)
	for name, v := range values {
		fd := md.Fields().ByName(protoreflect.Name(name))
		switch x := v.(type) {
		case string:
			m.Set(fd, protoreflect.ValueOfString(x))
		case int64:
			m.Set(fd, protoreflect.ValueOfInt64(x))
		case uint64:
			m.Set(fd, protoreflect.ValueOfUint64(x))
		case []string:
			l := m.Mutable(fd).List()
			for _, s := range x {
				l.Append(protoreflect.ValueOfString(s))
			}
		case []*dynamicpb.Message:
			l := m.Mutable(fd).List()
			for _, s := range x {
				l.Append(protoreflect.ValueOfMessage(s))
			}
		case map[string]string:
			mp := m.Mutable(fd).Map()
			for k, s := range x {
				mp.Set(protoreflect.ValueOfString(k).MapKey(), protoreflect.ValueOfString(s))
			}
		}
	}
	return m
}

// customer is a caller holding two accounts and no compartment.
func customer() instance.Principal {
	return instance.Principal{
		Subject:   "u-1",
		Clearance: toolv1.Clearance_CLEARANCE_INTERNAL,
		Attrs:     map[string]any{"customer_id": "C-1001", "accounts": []string{"A-1", "A-2"}},
	}
}
