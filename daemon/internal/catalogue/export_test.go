package catalogue

import (
	"buf.build/go/protovalidate"
	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/daemon/internal/call"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// CompileShards compiles the validator of tools' inputs in at most n
// shards, for the tests that hold a sharded validator to an unsharded one.
func CompileShards(tools []*call.Tool, n int) (protovalidate.Validator, []string) {
	return compileShards(tools, n, nil, nil)
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

// LazyShards counts the shards of g's validator that compile their inputs
// on first use, of the shards that hold inputs.
func LazyShards(g *Generation) (lazy, of int) {
	v, _ := g.validator.(*shardedValidator)
	if v == nil {
		return 0, 0
	}
	for _, b := range v.buckets {
		if len(b.inputs) == 0 {
			continue
		}
		of++
		if b.lazy {
			lazy++
		}
	}
	return lazy, of
}

// FileKeyOf is the key of the file declaring md.
func FileKeyOf(g *Generation, md protoreflect.MessageDescriptor) artifact.FileKey {
	key, _ := g.built.KeyOf(md.ParentFile().Path())
	return key
}
