package instance_test

import (
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	"github.com/garm-dev/garm/protoc-gen-garm/compile/instance"
	"github.com/garm-dev/garm/protoc-gen-garm/internal/fixture"
)

// requestsFile is a file of n request messages, Request0 … Request<n-1>,
// each with a string id: one package's tools, as a large catalogue
// declares them.
func requestsFile(t *testing.T, n int) protoreflect.MessageDescriptors {
	t.Helper()
	var b strings.Builder
	b.WriteString("syntax = \"proto3\";\npackage garm.test.requests;\n")
	for i := range n {
		fmt.Fprintf(&b, "message Request%d { string id = 1; int64 amount = 2; }\n", i)
	}
	return fixture.Compile(t, map[string]string{"requests.proto": b.String()}, nil, "requests.proto")[0].Messages()
}

// allocsPerTool is the allocations of compiling one rule for a tool whose
// request message is in a file of n messages, after another tool of the
// same file compiled its rule.
func allocsPerTool(t *testing.T, n int) float64 {
	t.Helper()
	const tools = 10
	messages := requestsFile(t, max(n, tools+1))
	env := newEnv(t)
	next := 0
	return testing.AllocsPerRun(tools, func() {
		md := messages.Get(next)
		next++
		_, err := env.Compile(instance.Target{Phase: planv1.RulePhase_RULE_PHASE_REQUIRE, Request: md}, `request.id == principal.subject`)
		if err != nil {
			t.Fatal(err)
		}
	})
}

// A file's messages are registered with CEL once, not once per tool: a
// rule of one more tool of a large package costs what it costs in a small
// one. Registering the file per tool made a 10,000-tool catalogue with two
// rules a tool take 30 s and 2 GiB to mount (docs/decisions/0138).
//
// Not parallel: AllocsPerRun counts every goroutine's allocations.
func TestOneMoreToolOfALargePackageCompilesItsRuleAsCheaplyAsInASmallOne(t *testing.T) {
	small, large := allocsPerTool(t, 11), allocsPerTool(t, 400)
	t.Logf("allocations per tool: %.0f in a file of 11 messages, %.0f in a file of 400", small, large)
	if large > 2*small {
		t.Fatalf("a rule of one more tool costs %.0f allocations in a file of 400 messages and %.0f in a file of 11: each tool registers its whole file again", large, small)
	}
}
