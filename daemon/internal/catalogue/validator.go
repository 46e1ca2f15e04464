package catalogue

import (
	"cmp"
	"errors"
	"fmt"
	"hash/fnv"
	"runtime"
	"slices"
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
// after another, so the inputs are cut into shards by the file that
// declares them, each compiled by its own protovalidate.New beside the
// others; a message's rules compile the same whatever else its validator
// holds. A shard whose inputs are exactly those of the serving
// generation's shard of the same number — the same descriptors, which a
// reload reuses only where the digests prove them unchanged — takes that
// shard's validator instead of compiling it again: compiling is a pure
// function of the descriptors.
//
// A shard whose every input vouched says was checked by an earlier mount of
// this executable — its file's key, and so the bytes of the file and all it
// imports, in the check cache's record (docs/decisions/0148) — is not
// compiled now: its validator compiles each input on the input's first
// validation, which an earlier mount proved compiles. Such a shard is not
// asked to refuse a message it was not built for; a message no shard holds
// goes to a validator built for none, which refuses it.
func compileValidator(tools []*call.Tool, serving *shardedValidator, vouched func(protoreflect.MessageDescriptor) bool) (protovalidate.Validator, []string) {
	return compileShards(tools, max(minValidatorShards, runtime.GOMAXPROCS(0)), serving, vouched)
}

// minValidatorShards is the fewest shards the inputs are cut into: enough
// that a reload changing one file of many compiles a small part again,
// few enough that the base environment each protovalidate.New builds
// (about 1.7 ms of CPU) stays a small part of a mount.
const minValidatorShards = 8

// compileShards is compileValidator with the inputs cut into at most n
// shards.
func compileShards(tools []*call.Tool, n int, serving *shardedValidator, vouched func(protoreflect.MessageDescriptor) bool) (protovalidate.Validator, []string) {
	buckets := shardInputs(tools, n)
	errs := make([]error, n)
	// checkedBefore marks a shard not compiled by this mount: taken from
	// serving, or lazy on the check cache's word.
	checkedBefore := make([]bool, n)
	inParallel(n, func(i int) {
		b := &buckets[i]
		if len(b.inputs) == 0 {
			return
		}
		if serving != nil && len(serving.buckets) == n && slices.Equal(serving.buckets[i].inputs, b.inputs) {
			b.validator, b.lazy, checkedBefore[i] = serving.buckets[i].validator, serving.buckets[i].lazy, true
			return
		}
		if vouched != nil && !slices.ContainsFunc(b.inputs, func(md protoreflect.MessageDescriptor) bool { return !vouched(md) }) {
			b.validator, errs[i] = protovalidate.New()
			b.lazy, checkedBefore[i] = true, true
			return
		}
		b.validator, errs[i] = protovalidate.New(protovalidate.WithMessageDescriptors(b.inputs...), protovalidate.WithDisableLazy())
	})
	if err := errors.Join(errs...); err != nil {
		return nil, []string{fmt.Sprintf("the tools' validation rules do not compile: %v", err)}
	}
	v := &shardedValidator{buckets: buckets, byInput: make(map[protoreflect.MessageDescriptor]protovalidate.Validator, len(tools))}
	if slices.ContainsFunc(buckets, func(b validatorShard) bool { return b.lazy }) {
		refuser, err := protovalidate.New(protovalidate.WithDisableLazy())
		if err != nil {
			return nil, []string{fmt.Sprintf("the tools' validation rules do not compile: %v", err)}
		}
		v.unknown = refuser
	}
	// A shard taken from serving passed this check in serving's mount, on
	// the same descriptors, and answers it the same now; a lazy shard
	// passed it in an earlier mount the check cache vouches for.
	compiled := make(map[protovalidate.Validator]bool, n)
	for i, b := range buckets {
		if b.validator == nil {
			continue
		}
		compiled[b.validator] = !checkedBefore[i]
		v.shards = append(v.shards, b.validator)
		for _, md := range b.inputs {
			v.byInput[md] = b.validator
		}
	}
	problems := make([]string, len(tools))
	inParallel(len(tools), func(i int) {
		t := tools[i]
		if !compiled[v.byInput[t.Input]] {
			return
		}
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

// validatorShard is one shard's inputs, sorted by full name, and the
// validator compiled for them (nil when it holds none). A lazy shard's
// validator compiles each input on its first validation.
type validatorShard struct {
	inputs    []protoreflect.MessageDescriptor
	validator protovalidate.Validator
	lazy      bool
}

// shardInputs cuts the tools' distinct inputs into n shards by a hash of
// the path of the file declaring each, so that an input's shard depends
// on nothing else in the catalogue; some shards may be empty.
func shardInputs(tools []*call.Tool, n int) []validatorShard {
	shards := make([]validatorShard, n)
	seen := make(map[protoreflect.MessageDescriptor]bool, len(tools))
	for _, t := range tools {
		if seen[t.Input] {
			continue
		}
		seen[t.Input] = true
		h := fnv.New32a()
		h.Write([]byte(t.Input.ParentFile().Path()))
		s := &shards[h.Sum32()%uint32(n)]
		s.inputs = append(s.inputs, t.Input)
	}
	for _, s := range shards {
		slices.SortFunc(s.inputs, func(x, y protoreflect.MessageDescriptor) int { return cmp.Compare(x.FullName(), y.FullName()) })
	}
	return shards
}

// shardedValidator is one validator to the chain: each message goes to
// the shard compiled for it. A message no shard was compiled for goes to
// unknown, a validator built for none, when a shard is lazy, and to the
// first shard otherwise; either refuses it as protovalidate refuses a
// message it was not built for.
type shardedValidator struct {
	shards  []protovalidate.Validator
	unknown protovalidate.Validator
	byInput map[protoreflect.MessageDescriptor]protovalidate.Validator
	// buckets are every shard by number, empty ones included, for the
	// next reload's mount to reuse.
	buckets []validatorShard
}

func (v *shardedValidator) Validate(msg proto.Message, options ...protovalidate.ValidationOption) error {
	if msg == nil {
		return nil
	}
	shard, ok := v.byInput[msg.ProtoReflect().Descriptor()]
	switch {
	case ok:
	case v.unknown != nil:
		shard = v.unknown
	default:
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
