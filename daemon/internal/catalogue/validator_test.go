package catalogue_test

import (
	"errors"
	"fmt"
	"testing"

	"buf.build/go/protovalidate"
	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/catalogue/cataloguetest"
	"google.golang.org/protobuf/types/dynamicpb"
)

func TestEveryShardOfTheValidatorValidatesItsInputsAsOneValidatorDoes(t *testing.T) {
	dir := t.TempDir()
	cataloguetest.WriteLarge(t, dir, 5, 3)
	g := cataloguetest.Load(t, dir)
	whole, problems := catalogue.CompileShards(g.Tools, 1)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	for _, n := range []int{2, 3, 5, 8} {
		t.Run(fmt.Sprintf("%d shards", n), func(t *testing.T) {
			sharded, problems := catalogue.CompileShards(g.Tools, n)
			if len(problems) > 0 {
				t.Fatal(problems)
			}
			for _, tool := range g.Tools {
				for _, body := range []string{`{}`, `{"id":"a","limit":5}`, `{"id":"","limit":500}`} {
					msg := cataloguetest.Message(t, tool.Input, body)
					want, got := whole.Validate(msg), sharded.Validate(msg)
					if fmt.Sprint(want) != fmt.Sprint(got) {
						t.Fatalf("%s %s: sharded %v, whole %v", tool.FQN, body, got, want)
					}
				}
			}
			bad := cataloguetest.Message(t, g.Tools[0].Input, `{"id":""}`)
			var violations *protovalidate.ValidationError
			if err := sharded.Validate(bad); !errors.As(err, &violations) {
				t.Fatalf("an empty id is not refused: %v", err)
			}
			// A message no shard was built for is refused as protovalidate
			// refuses one: a compilation error, never a pass.
			var compile *protovalidate.CompilationError
			if err := sharded.Validate(dynamicpb.NewMessage(g.Tools[0].Output)); !errors.As(err, &compile) {
				t.Fatalf("a message no shard holds: %v", err)
			}
		})
	}
}
