package catalogue

import (
	"buf.build/go/protovalidate"
	"github.com/garm-dev/garm/daemon/internal/call"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// CompileShards compiles the validator of tools' inputs in at most n
// shards, for the tests that hold a sharded validator to an unsharded one.
func CompileShards(tools []*call.Tool, n int) (protovalidate.Validator, []string) {
	return compileShards(tools, n, nil)
}

// ReusedFiles counts the descriptor files g's Reload took from the
// generation serving, for the tests that hold reuse to what the digests
// prove.
func ReusedFiles(g *Generation) int { return g.reusedFiles }

// ReusedPlans counts the package plans g's Reload took from the generation
// serving.
func ReusedPlans(g *Generation) int { return g.reusedPlans }

// ShardOf is the shard of g's validator compiled for md, or nil.
func ShardOf(g *Generation, md protoreflect.MessageDescriptor) protovalidate.Validator {
	v, _ := g.validator.(*shardedValidator)
	if v == nil {
		return nil
	}
	return v.byInput[md]
}
