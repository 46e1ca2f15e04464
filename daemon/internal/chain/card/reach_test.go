package card_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/bufbuild/protocompile"
	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/chain/card"
	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// recursive holds types the catalogue builder refuses (a plan is flat), so
// Reaches meets them only if a catalogue slips one past; it must still
// answer, and answer right whichever way a cycle is entered.
const recursive = `
syntax = "proto3";
package reachfix;
import "garm/card/v1/card.proto";
import "google/protobuf/struct.proto";
import "google/protobuf/any.proto";

message Tree { repeated Tree children = 1; Leaf leaf = 2; }
message Leaf { string name = 1; }

message Ping { Pong pong = 1; }
message Pong { Ping ping = 1; Holder holder = 2; }
message Holder { map<string, garm.card.v1.Card> cards = 1; }

message Outer { Ping ping = 1; Tree tree = 2; }

message Values { google.protobuf.Struct s = 1; google.protobuf.Any a = 2; repeated google.protobuf.Value v = 3; }
`

func compileRecursive(tb testing.TB) protoreflect.FileDescriptor {
	tb.Helper()
	compiler := protocompile.Compiler{Resolver: protocompile.WithStandardImports(protocompile.CompositeResolver{
		&protocompile.SourceResolver{Accessor: protocompile.SourceAccessorFromMap(map[string]string{"reachfix.proto": recursive})},
		&protocompile.SourceResolver{ImportPaths: []string{filepath.Join("..", "..", "..", "..", "annotations")}},
	})}
	files, err := compiler.Compile(context.Background(), "reachfix.proto")
	if err != nil {
		tb.Fatalf("compiling the recursive fixture: %v", err)
	}
	return files[0]
}

func TestReachesIsRightThroughCyclesWhicheverWayTheyAreEntered(t *testing.T) {
	messages := compileRecursive(t).Messages()
	for name, want := range map[protoreflect.Name]bool{
		"Tree":   false,
		"Leaf":   false,
		"Ping":   true, // only through Pong, whose way to a card is its second field
		"Pong":   true,
		"Holder": true,
		"Outer":  true,
		"Values": false, // well-known types hold no card, however they nest
	} {
		md := messages.ByName(name)
		if got := card.Reaches(md); got != want {
			t.Errorf("Reaches(%s) = %v, want %v", name, got, want)
		}
	}
}

func TestProjectFindsACardDeepInARecursiveAnswer(t *testing.T) {
	outer := compileRecursive(t).Messages().ByName("Outer")
	tl := &call.Tool{
		FQN:        "reachfix.outer",
		Output:     outer,
		OutputPlan: &planv1.MessagePlan{Message: string(outer.FullName())},
		CardFloor:  call.Label{Clearance: internal},
	}
	resp := answer(t, tl, `{"ping": {"pong": {"ping": {"pong": {"holder": {"cards": {
		"open": {"title": "O", "body": [{"access": {"clearance": "CLEARANCE_RESTRICTED"}, "text": {"text": "r"}}]},
		"shut": {"title": "S", "access": {"clearance": "CLEARANCE_RESTRICTED"}}}}}}}}, "tree": {"children": [{"leaf": {"name": "l"}}]}}`)
	got, err := card.Project(tl, shapeOf(t, confidential), numbering(t), resp)
	if err != nil || got.Withheld != 2 {
		t.Fatalf("Project = %+v, %v; want 2 withheld", got, err)
	}
	assertAnswer(t, resp, `{"ping": {"pong": {"ping": {"pong": {"holder": {"cards": {
		"open": {"title": "O", "disclosure": {"withheldFields": ["body[0]"]}}}}}}}}, "tree": {"children": [{"leaf": {"name": "l"}}]}}`)
}
