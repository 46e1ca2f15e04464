package artifact

import (
	"crypto/sha256"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// Built are the descriptor files an artifact read to serve was built from,
// each with the key that says what it was built from: the SHA-256 of the
// file's bytes and the keys of its imports, in order (a Merkle chain). A
// reload may take a file's descriptors from the generation serving instead
// of building them again only when the keys are equal (ReloadToServe):
// building a file's descriptors is a pure function of its bytes and its
// imports' descriptors, so equal keys prove the result is the one this
// process already built and checked (docs/decisions/0070, 0076).
//
// Built holds only what this process built itself from bytes it read;
// nothing an artifact says about itself goes into a key. It is read-only
// once its read returns, so any number of reloads may read it at once.
type Built struct {
	files map[string]builtFile
}

// builtFile is one file's descriptors and the key of what they were built
// from.
type builtFile struct {
	key  fileKey
	desc protoreflect.FileDescriptor
}

// fileKey is sha256(sha256(file bytes) ‖ key of each import, in order).
type fileKey [sha256.Size]byte

// Len is how many files b holds; a nil Built holds none.
func (b *Built) Len() int {
	if b == nil {
		return 0
	}
	return len(b.files)
}

// reusable is the descriptors b holds for a file of this name and key.
func (b *Built) reusable(name string, key fileKey) (protoreflect.FileDescriptor, bool) {
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
