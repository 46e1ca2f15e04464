package artifact

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	cataloguev1 "github.com/garm-dev/garm/gen/garm/catalogue/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// The work of reading a large artifact is spread over the available cores
// where it divides into independent parts: garmd reads a catalogue at start
// and on every reload, and design 9 budgets that for 10,000 tools. Each
// function here computes exactly what its sequential counterpart computes
// (proto.Unmarshal, protodesc.NewFiles, a loop); only the order in which
// independent parts are done changes.

// optionsUnresolved resolves no extension: the descriptors' options keep
// their extensions (garm's annotations, protovalidate's rules) as raw
// fields, which every reader of them re-reads against its own vocabulary
// (compile's option re-reader, protovalidate's resolver). Decoding them
// here too would build, and protodesc would then deep-copy, a message per
// annotated field that nothing reads.
var optionsUnresolved = new(protoregistry.Types)

// Field numbers of garm.catalogue.v1.Catalogue decoded on their own.
const (
	catalogueFilesField = 2
	cataloguePlansField = 8
)

// unmarshalCatalogue is proto.Unmarshal of data into c (with extensions
// left unresolved), decoding the descriptor set, the plans and the rest
// beside each other. A field's value depends only on the records of its own
// number, in their order, so decoding each group of records on its own
// gives the same message; a record whose wire type does not match its field
// stays with the rest, where it becomes an unknown field as it would have.
func unmarshalCatalogue(data []byte, c *cataloguev1.Catalogue) error {
	opts := proto.UnmarshalOptions{Resolver: optionsUnresolved}
	var files, plans, rest spans
	for at := 0; at < len(data); {
		num, typ, n := protowire.ConsumeField(data[at:])
		if n < 0 {
			// Malformed: let proto say so in its own words.
			return opts.Unmarshal(data, c)
		}
		switch {
		case num == catalogueFilesField && typ == protowire.BytesType:
			files.add(at, at+n)
		case num == cataloguePlansField && typ == protowire.BytesType:
			plans.add(at, at+n)
		default:
			rest.add(at, at+n)
		}
		at += n
	}
	var fromFiles, fromPlans cataloguev1.Catalogue
	groups := []struct {
		records spans
		into    proto.Message
	}{{files, &fromFiles}, {plans, &fromPlans}, {rest, c}}
	err := forEach(len(groups), func(i int) error {
		return opts.Unmarshal(groups[i].records.bytes(data), groups[i].into)
	})
	if err != nil {
		return err
	}
	c.Files, c.Plans = fromFiles.Files, fromPlans.Plans
	return nil
}

// spans are byte ranges of one buffer, in order.
type spans [][2]int

func (s *spans) add(from, to int) {
	if n := len(*s); n > 0 && (*s)[n-1][1] == from {
		(*s)[n-1][1] = to
		return
	}
	*s = append(*s, [2]int{from, to})
}

// bytes are the spans' bytes: a slice of data when they are one run.
func (s spans) bytes(data []byte) []byte {
	switch len(s) {
	case 0:
		return nil
	case 1:
		return data[s[0][0]:s[0][1]]
	}
	var out []byte
	for _, r := range s {
		out = append(out, data[r[0]:r[1]]...)
	}
	return out
}

// newFiles is protodesc.NewFiles: every file of the set built, checked and
// registered, dependencies first, refusing a file named twice, an import
// cycle, an import the set does not hold, and anything protodesc.NewFile or
// Files.RegisterFile refuses. Files whose dependencies are all registered
// are built beside each other, reading the registry only, then registered
// one by one.
func newFiles(set *descriptorpb.FileDescriptorSet) (*protoregistry.Files, error) {
	r, _, _, err := buildFiles(decodedFiles(set), nil, nil)
	return r, err
}

// buildFiles is newFiles over files that may still be bytes: each is
// decoded by the worker that builds it, and dropped once built, so the
// descriptor protos of the whole set are never held at once. A file whose
// bytes do not decode is a *malformedError.
//
// A file whose key (keyFile) equals the key serving holds for a file of its
// name is not decoded or built: serving's descriptors of it are registered
// instead, and counted in reused. Failing that, a file whose key checked
// holds is built from its bytes without being decoded or checked again
// (buildChecked). built holds every keyed file's descriptors, for the next
// reload.
func buildFiles(files []encodedFile, serving *Built, checked *Checked) (r *protoregistry.Files, built *Built, counted builtFrom, err error) {
	byName := make(map[string]*encodedFile, len(files))
	for i := range files {
		f := &files[i]
		if _, ok := byName[f.name]; ok {
			return nil, nil, builtFrom{}, fmt.Errorf("file appears multiple times: %q", f.name)
		}
		byName[f.name] = f
	}
	levels, err := dependencyLevels(files, byName)
	if err != nil {
		return nil, nil, builtFrom{}, err
	}
	r = new(protoregistry.Files)
	built = &Built{files: make(map[string]builtFile, len(files))}
	for _, level := range levels {
		descs := make([]protoreflect.FileDescriptor, len(level))
		how := make([]builtHow, len(level))
		err := forEach(len(level), func(i int) error {
			f := level[i]
			keyFile(f, byName)
			if f.keyed {
				if fd, ok := serving.reusable(f.name, f.key); ok {
					descs[i], how[i] = fd, takenFromServing
					f.raw = nil
					return nil
				}
				if checked.has(f.key) {
					descs[i], how[i] = buildChecked(f.raw, r), builtFromChecked
					f.raw = nil
					return nil
				}
			}
			fdp, err := f.take()
			if err != nil {
				return err
			}
			descs[i], err = protodesc.NewFile(fdp, r)
			return err
		})
		if err != nil {
			return nil, nil, builtFrom{}, err
		}
		for i, fd := range descs {
			if err := r.RegisterFile(fd); err != nil {
				return nil, nil, builtFrom{}, err
			}
			if f := level[i]; f.keyed {
				built.files[f.name] = builtFile{key: f.key, desc: fd}
			}
			switch how[i] {
			case takenFromServing:
				counted.reused++
			case builtFromChecked:
				counted.fromChecked++
			}
		}
	}
	return r, built, counted, nil
}

// builtHow is how buildFiles came by a file's descriptors.
type builtHow uint8

const (
	builtWithEveryCheck builtHow = iota
	takenFromServing
	builtFromChecked
)

// builtFrom counts the files buildFiles did not build with every check.
type builtFrom struct{ reused, fromChecked int }

// dependencyLevels groups files so that each file's imports held by the set
// are in earlier groups, keeping the set's order within a group. An import
// the set does not hold is left for protodesc.NewFile to refuse.
func dependencyLevels(files []encodedFile, byName map[string]*encodedFile) ([][]*encodedFile, error) {
	const visiting = -1
	level := make(map[string]int, len(files))
	var depth func(f *encodedFile) (int, error)
	depth = func(f *encodedFile) (int, error) {
		switch l, ok := level[f.name]; {
		case ok && l == visiting:
			return 0, fmt.Errorf("import cycle in file: %q", f.name)
		case ok:
			return l, nil
		}
		level[f.name] = visiting
		l := 0
		for _, dep := range f.imports {
			depf, ok := byName[dep]
			if !ok {
				continue
			}
			dl, err := depth(depf)
			if err != nil {
				return 0, err
			}
			l = max(l, dl+1)
		}
		level[f.name] = l
		return l, nil
	}
	var levels [][]*encodedFile
	for i := range files {
		f := &files[i]
		l, err := depth(f)
		if err != nil {
			return nil, err
		}
		for len(levels) <= l {
			levels = append(levels, nil)
		}
		levels[l] = append(levels[l], f)
	}
	return levels, nil
}

// forEach calls f(0) … f(n-1) on up to GOMAXPROCS goroutines and returns
// the error of the lowest index that failed, so the refusal does not depend
// on scheduling. Every call runs, so f must be safe to call concurrently.
func forEach(n int, f func(i int) error) error {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := range n {
			if err := f(i); err != nil {
				return err
			}
		}
		return nil
	}
	errs := make([]error, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				errs[i] = f(i)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
