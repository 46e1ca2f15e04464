package artifact

import (
	"bytes"
	"crypto/sha256"
	"slices"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/runtime/protoimpl"
)

// FileKey is what a descriptor file's descriptors are built from, as this
// package keys it: sha256(sha256(the file's bytes) ‖ the key of each
// import, in order), a Merkle chain over the file and everything it
// resolves against.
type FileKey [sha256.Size]byte

// Checked is the keys of descriptor files that a process of this very
// executable built with every check (protodesc.NewFile, against the imports
// the key names) and accepted, as a check cache recorded them for the next
// start (daemon/internal/checkcache; docs/decisions/0146). A load given it
// builds a file whose key it holds from the file's bytes alone, the way
// generated code builds its own (protoimpl.DescBuilder), without decoding
// the bytes into a FileDescriptorProto and checking them again: the key
// proves the bytes, and the bytes of every import, are those that were
// checked, and the executable's identity, which the cache checks before it
// answers a Checked, proves the checks are the same code. Nothing else is
// taken on trust: every other check of a read runs as it does without it.
//
// The same set serves garmd for the files whose tool inputs' validation
// rules a mount compiled (catalogue.Options.Validated). A nil Checked holds
// nothing. It is read-only once made.
type Checked struct {
	keys map[digestKey]struct{}
}

// NewChecked is the set of keys.
func NewChecked(keys []FileKey) *Checked {
	c := &Checked{keys: make(map[digestKey]struct{}, len(keys))}
	for _, k := range keys {
		c.keys[digestKey(k)] = struct{}{}
	}
	return c
}

// Len is how many keys c holds.
func (c *Checked) Len() int {
	if c == nil {
		return 0
	}
	return len(c.keys)
}

func (c *Checked) has(key digestKey) bool {
	if c == nil {
		return false
	}
	_, ok := c.keys[key]
	return ok
}

// Has reports whether c holds key.
func (c *Checked) Has(key FileKey) bool { return c.has(digestKey(key)) }

// FileKeys are the keys of every file b holds descriptors of — each built
// and checked by this process, taken from the generation it served, or
// built from a key it was given as checked — sorted, for a check cache to
// record.
func (b *Built) FileKeys() []FileKey {
	if b == nil {
		return nil
	}
	keys := make([]FileKey, 0, len(b.files))
	for _, f := range b.files {
		keys = append(keys, FileKey(f.key))
	}
	return SortedKeys(keys)
}

// SortedKeys sorts keys and drops repeats, in place, as a check cache
// records them.
func SortedKeys(keys []FileKey) []FileKey {
	slices.SortFunc(keys, func(a, b FileKey) int { return bytes.Compare(a[:], b[:]) })
	return slices.Compact(keys)
}

// KeyOf is the key of the file at path that b holds descriptors of.
func (b *Built) KeyOf(path string) (FileKey, bool) {
	if b == nil {
		return FileKey{}, false
	}
	f, ok := b.files[path]
	return FileKey(f.key), ok
}

// buildChecked builds a file whose key was checked before from its bytes,
// as generated code does: descriptors filled in lazily from the bytes on
// first use, options decoded with extensions unresolved as take decodes
// them (optionsUnresolved). The bytes are copied so that the descriptors
// keep their own bytes and not the artifact's. The file is not registered
// here: buildFiles registers it, as it registers every other.
func buildChecked(raw []byte, r *protoregistry.Files) protoreflect.FileDescriptor {
	return protoimpl.DescBuilder{
		RawDescriptor: bytes.Clone(raw),
		TypeResolver:  optionsUnresolved,
		FileRegistry:  registeredLater{r},
	}.Build().File
}

// registeredLater resolves a file's imports and names in the registry being
// built, and leaves registering the file to buildFiles, after its level.
type registeredLater struct{ *protoregistry.Files }

func (registeredLater) RegisterFile(protoreflect.FileDescriptor) error { return nil }
