package artifact

import (
	"crypto/sha256"

	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	"github.com/garm-dev/garm/protoc-gen-garm/compile"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Built is what this process built and checked from an artifact it read to
// serve, kept for the next reload to reuse where the digests prove it
// unchanged (ReloadToServe; docs/decisions/0070, 0076):
//
//   - each descriptor file's descriptors, keyed by the SHA-256 of the file's
//     bytes and the keys of its imports, in order (a Merkle chain): building
//     a file is a pure function of its bytes and its imports' descriptors;
//   - each package plan, keyed by the SHA-256 of its record: decoding is a
//     pure function of the bytes;
//   - the tool model, a package of which is a pure function of its files'
//     descriptors (compile.BuildReusing);
//   - the SHA-256 of the field-docs records it checked.
//
// Built holds only what this process built itself from bytes it read and
// accepted whole; nothing an artifact says about itself goes into a key. It
// is read-only once its read returns, so any number of reloads may read it
// at once.
type Built struct {
	files map[string]builtFile
	// plans are the package plans by the SHA-256 of the record each was
	// decoded from.
	plans map[digestKey]*planv1.PackagePlan
	// model is the tool model read from the files.
	model *compile.Model
	// docs, when docsChecked, is the SHA-256 of the field-docs records
	// checked (checkFieldDocs).
	docs        digestKey
	docsChecked bool
}

// checkDocs is checkFieldDocs of records, unless serving checked records
// of the same SHA-256 (the check is a pure function of their bytes). It
// answers their key.
func (b *Built) checkDocs(records [][]byte) (digestKey, error) {
	h := sha256.New()
	for _, r := range records {
		h.Write(r)
	}
	var key digestKey
	h.Sum(key[:0])
	if b != nil && b.docsChecked && b.docs == key {
		return key, nil
	}
	return key, checkFieldDocs(records)
}

// previousModel is the tool model b's files were read into, for
// compile.BuildReusing; nil when there is none.
func (b *Built) previousModel() *compile.Model {
	if b == nil {
		return nil
	}
	return b.model
}

// builtFile is one file's descriptors and the key of what they were built
// from.
type builtFile struct {
	key  digestKey
	desc protoreflect.FileDescriptor
}

// digestKey is a SHA-256 this process computed: of a file, sha256(sha256(its
// bytes) ‖ the key of each import, in order) (keyFile); of a plan record or
// of the field-docs records, of their bytes.
type digestKey [sha256.Size]byte

// Len is how many files b holds; a nil Built holds none.
func (b *Built) Len() int {
	if b == nil {
		return 0
	}
	return len(b.files)
}

// reusable is the descriptors b holds for a file of this name and key.
func (b *Built) reusable(name string, key digestKey) (protoreflect.FileDescriptor, bool) {
	if b == nil {
		return nil, false
	}
	f, ok := b.files[name]
	if !ok || f.key != key {
		return nil, false
	}
	return f.desc, true
}

// keyFile computes f's key from its bytes and its imports' keys, when it
// has one: a file decoded whole (it has no bytes of its own) or one whose
// import the set does not hold or could not key has none, and neither do
// the files that import it. Its imports are in earlier dependency levels,
// so their keys are final.
func keyFile(f *encodedFile, byName map[string]*encodedFile) {
	if f.raw == nil {
		return
	}
	h := sha256.New()
	own := sha256.Sum256(f.raw)
	h.Write(own[:])
	for _, name := range f.imports {
		dep, ok := byName[name]
		if !ok || !dep.keyed {
			return
		}
		h.Write(dep.key[:])
	}
	h.Sum(f.key[:0])
	f.keyed = true
}

// readPlans are an artifact's package plans, each with the key of its
// record, and how many were taken from serving.
type readPlans struct {
	plans       []*planv1.PackagePlan
	keys        []digestKey
	fromServing []bool
	reused      int
	// docs is the SHA-256 of the field-docs records, in order.
	docs digestKey
}

// decodePlans decodes each plan record on its own, beside the others,
// keyed by the SHA-256 of its bytes: a record serving holds under the same
// key is the same bytes, so serving's plan decoded from it is taken instead
// (plans are never changed once loaded).
func decodePlans(values [][]byte, serving *Built) (*readPlans, error) {
	read := &readPlans{plans: make([]*planv1.PackagePlan, len(values)), keys: make([]digestKey, len(values))}
	read.fromServing = make([]bool, len(values))
	taken := read.fromServing
	opts := proto.UnmarshalOptions{Resolver: optionsUnresolved}
	err := forEach(len(values), func(i int) error {
		read.keys[i] = sha256.Sum256(values[i])
		if serving != nil {
			if p, ok := serving.plans[read.keys[i]]; ok {
				read.plans[i], taken[i] = p, true
				return nil
			}
		}
		read.plans[i] = new(planv1.PackagePlan)
		return opts.Unmarshal(values[i], read.plans[i])
	})
	if err != nil {
		return nil, err
	}
	for _, t := range taken {
		if t {
			read.reused++
		}
	}
	return read, nil
}

// checkedBefore reports whether serving checked a plan it holds, for the
// message named as md is, against md itself (compile.CheckPlan, a pure
// function of the two), so a reload taking that plan need not check it
// again. Every plan an accepted artifact holds belongs to a tool and was
// checked against that tool's message of the plan's name, which its
// registry held once, in one file; md is that very descriptor when its file
// is serving's very file of its path.
func (b *Built) checkedBefore(md protoreflect.MessageDescriptor) bool {
	if b == nil {
		return false
	}
	f, ok := b.files[md.ParentFile().Path()]
	return ok && f.desc == md.ParentFile()
}

// taken are the package plans taken from serving.
func (r *readPlans) taken() map[*planv1.PackagePlan]bool {
	taken := make(map[*planv1.PackagePlan]bool, r.reused)
	for i, p := range r.plans {
		if r.fromServing[i] {
			taken[p] = true
		}
	}
	return taken
}
