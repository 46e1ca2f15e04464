package catalogue

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"buf.build/go/protovalidate"
	"github.com/garm-dev/garm/daemon/internal/call"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// Validator is the generation's protovalidate validator over every tool's
// input (chain step 3b), compiled by Mount; nil before Mount accepted the
// generation, which then must not serve.
func (g *Generation) Validator() protovalidate.Validator { return g.validator }

// compileValidator builds the validator for every tool input, lazy
// compilation off, so a message the validator was not built for is refused
// rather than compiled during a call. protovalidate keeps a rule that does
// not compile as an error it returns on every validation of that message,
// so each input is validated once, empty, and a compilation error refuses
// the catalogue naming the tool (every such tool, not just the first); any
// other outcome of that one validation (valid, violations, a runtime error)
// is the empty message's business.
//
// Compiling is most of a mount, and protovalidate compiles one message
// after another, so the inputs are cut into shards by package, one per
// core, each compiled by its own protovalidate.New beside the others; a
// message's rules compile the same whatever else its validator holds.
func compileValidator(tools []*call.Tool) (protovalidate.Validator, []string) {
	return compileShards(tools, runtime.GOMAXPROCS(0))
}

// compileShards is compileValidator with the inputs cut into at most n
// shards.
func compileShards(tools []*call.Tool, n int) (protovalidate.Validator, []string) {
	shards := shardInputs(tools, n)
	built := make([]protovalidate.Validator, len(shards))
	errs := make([]error, len(shards))
	inParallel(len(shards), func(i int) {
		built[i], errs[i] = protovalidate.New(protovalidate.WithMessageDescriptors(shards[i]...), protovalidate.WithDisableLazy())
	})
	if err := errors.Join(errs...); err != nil {
		return nil, []string{fmt.Sprintf("the tools' validation rules do not compile: %v", err)}
	}
	v := &shardedValidator{shards: built, byInput: make(map[protoreflect.MessageDescriptor]protovalidate.Validator, len(tools))}
	for i, inputs := range shards {
		for _, md := range inputs {
			v.byInput[md] = built[i]
		}
	}
	problems := make([]string, len(tools))
	inParallel(len(tools), func(i int) {
		t := tools[i]
		var compile *protovalidate.CompilationError
		if err := v.Validate(dynamicpb.NewMessage(t.Input)); errors.As(err, &compile) {
			problems[i] = fmt.Sprintf("tool %s has validation rules on %s that do not compile: %v", t.FQN, t.Input.FullName(), compile)
		}
	})
	var refused []string
	for _, p := range problems {
		if p != "" {
			refused = append(refused, p)
		}
	}
	if len(refused) > 0 {
		return nil, refused
	}
	return v, nil
}

// shardInputs cuts the tools' distinct inputs into at most n shards of
// whole packages, in tool order, each about as large as the others.
func shardInputs(tools []*call.Tool, n int) [][]protoreflect.MessageDescriptor {
	var packages [][]protoreflect.MessageDescriptor
	seen := make(map[protoreflect.FullName]bool, len(tools))
	last := ""
	for _, t := range tools {
		if seen[t.Input.FullName()] {
			continue
		}
		seen[t.Input.FullName()] = true
		if len(packages) == 0 || t.Package != last {
			packages = append(packages, nil)
			last = t.Package
		}
		packages[len(packages)-1] = append(packages[len(packages)-1], t.Input)
	}
	n = max(1, min(n, len(packages)))
	per := (len(seen) + n - 1) / n
	shards := make([][]protoreflect.MessageDescriptor, 0, n)
	var shard []protoreflect.MessageDescriptor
	for _, inputs := range packages {
		shard = append(shard, inputs...)
		if len(shard) >= per && len(shards) < n-1 {
			shards = append(shards, shard)
			shard = nil
		}
	}
	if len(shard) > 0 || len(shards) == 0 {
		shards = append(shards, shard)
	}
	return shards
}

// shardedValidator is one validator to the chain: each message goes to
// the shard compiled for it. A message no shard was compiled for goes to
// the first, which refuses it as protovalidate refuses a message it was
// not built for.
type shardedValidator struct {
	shards  []protovalidate.Validator
	byInput map[protoreflect.MessageDescriptor]protovalidate.Validator
}

func (v *shardedValidator) Validate(msg proto.Message, options ...protovalidate.ValidationOption) error {
	if msg == nil {
		return nil
	}
	shard, ok := v.byInput[msg.ProtoReflect().Descriptor()]
	if !ok {
		shard = v.shards[0]
	}
	return shard.Validate(msg, options...)
}

var _ protovalidate.Validator = (*shardedValidator)(nil)

// inParallel calls f(0) … f(n-1) on up to GOMAXPROCS goroutines and
// returns when every call has.
func inParallel(n int, f func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				f(i)
			}
		})
	}
	wg.Wait()
}
