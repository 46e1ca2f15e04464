package checkcache

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
)

const (
	keyName    = "key"
	recordName = "checked-files"
	// version opens a record; a record of another version is not used.
	version = "garm check cache 1\n"
	keySize = 32
	// maxKeys bounds a record, and so what reading one may allocate: far
	// more descriptor files than a catalogue of artifact.MaxSize can hold.
	maxKeys = 1 << 20
	// maxIdentity bounds the executable's identity as recorded.
	maxIdentity = 1 << 10
)

// Cache is one check-cache directory, opened by this executable.
type Cache struct {
	dir      string
	key      []byte
	identity []byte

	mu sync.Mutex
	// recorded are the keys the record holds, as this process last read
	// or wrote it; a Record of the same keys writes nothing.
	recorded []artifact.FileKey
}

// Open opens the check cache in dir, making dir (mode 0700) and its key
// (0600) when they are absent. It refuses a dir anyone but its owner may
// write to, a key anyone but its owner may read or write, a key that is a
// link or not 32 bytes, and an executable with no build ID to tell it from
// another.
func Open(dir string) (*Cache, error) {
	identity, err := executableIdentity()
	if err != nil {
		return nil, err
	}
	return open(dir, identity)
}

func open(dir string, identity []byte) (*Cache, error) {
	if len(identity) == 0 || len(identity) > maxIdentity {
		return nil, errors.New("this executable has no build ID to record checks under")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := ownerOnly(dir, 0o022); err != nil {
		return nil, err
	}
	key, err := readOrMakeKey(filepath.Join(dir, keyName))
	if err != nil {
		return nil, err
	}
	return &Cache{dir: dir, key: key, identity: identity}, nil
}

// ownerOnly refuses a symbolic link, and a path whose mode has any bit of
// mask: a directory others may write to (0o022), a key others may read or
// write (0o077).
func ownerOnly(path string, mask fs.FileMode) error {
	info, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s is a symbolic link", path)
	}
	if perm := info.Mode().Perm(); perm&mask != 0 {
		return fmt.Errorf("%s is open to others (mode %#o); only its owner may write the directory (0700 or 0755) and read the key (0600)", path, perm)
	}
	return nil
}

// readOrMakeKey reads the key at path, making it first when there is none:
// written whole to a temporary file and linked into place, so that two
// garmds starting at once agree on one key and neither reads half of it.
func readOrMakeKey(path string) ([]byte, error) {
	if key, err := readKey(path); !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	key := make([]byte, keySize)
	rand.Read(key)
	tmp, err := os.CreateTemp(filepath.Dir(path), ".key-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(key); err != nil {
		tmp.Close()
		return nil, err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return nil, err
	}
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	return readKey(path)
}

func readKey(path string) ([]byte, error) {
	if err := ownerOnly(path, 0o077); err != nil {
		return nil, err
	}
	key, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(key) != keySize {
		return nil, fmt.Errorf("%s holds %d bytes, not a key of %d", path, len(key), keySize)
	}
	return key, nil
}

// Checked is what the record vouches for. With no record yet it answers
// nil and no error; a record it cannot use answers nil and why, and the
// load checks every file.
func (c *Cache) Checked() (*artifact.Checked, error) {
	f, err := os.Open(filepath.Join(c.dir, recordName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	limit := int64(len(version)) + 2 + maxIdentity + 4 + maxKeys*sha256.Size + sha256.Size
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, errors.New("the record is larger than a catalogue can need")
	}
	keys, err := c.verify(data)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.recorded = keys
	c.mu.Unlock()
	return artifact.NewChecked(keys), nil
}

// verify reads a record's keys once its MAC and identity hold.
func (c *Cache) verify(data []byte) ([]artifact.FileKey, error) {
	if len(data) < sha256.Size {
		return nil, errors.New("the record is truncated")
	}
	body, sum := data[:len(data)-sha256.Size], data[len(data)-sha256.Size:]
	if !hmac.Equal(sum, c.mac(body)) {
		return nil, errors.New("the record's MAC does not verify under this deployment's key")
	}
	rest, ok := bytes.CutPrefix(body, []byte(version))
	if !ok {
		return nil, errors.New("the record is of another version")
	}
	if len(rest) < 2 {
		return nil, errors.New("the record is truncated")
	}
	n := int(binary.BigEndian.Uint16(rest))
	rest = rest[2:]
	if n > len(rest) {
		return nil, errors.New("the record is truncated")
	}
	if !bytes.Equal(rest[:n], c.identity) {
		return nil, errors.New("the record was written by another executable")
	}
	rest = rest[n:]
	if len(rest) < 4 {
		return nil, errors.New("the record is truncated")
	}
	count := int(binary.BigEndian.Uint32(rest))
	rest = rest[4:]
	if count > maxKeys || len(rest) != count*sha256.Size {
		return nil, errors.New("the record's keys are not as many as it says")
	}
	keys := make([]artifact.FileKey, count)
	for i := range keys {
		copy(keys[i][:], rest[i*sha256.Size:])
	}
	return keys, nil
}

// Record replaces the record with keys — a mounted generation's
// (catalogue.Generation.FileKeys) — unless it holds them already. It
// answers whether it wrote.
func (c *Cache) Record(keys []artifact.FileKey) (bool, error) {
	if len(keys) > maxKeys {
		return false, fmt.Errorf("%d descriptor files are more than a record holds", len(keys))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if slices.Equal(c.recorded, keys) {
		return false, nil
	}
	body := make([]byte, 0, len(version)+2+len(c.identity)+4+len(keys)*sha256.Size+sha256.Size)
	body = append(body, version...)
	body = binary.BigEndian.AppendUint16(body, uint16(len(c.identity)))
	body = append(body, c.identity...)
	body = binary.BigEndian.AppendUint32(body, uint32(len(keys)))
	for _, k := range keys {
		body = append(body, k[:]...)
	}
	if err := c.replace(append(body, c.mac(body)...)); err != nil {
		return false, err
	}
	c.recorded = slices.Clone(keys)
	return true, nil
}

// replace writes data to the record through a temporary file renamed over
// it, so that a reader sees the old record or the new one whole.
func (c *Cache) replace(data []byte) error {
	tmp, err := os.CreateTemp(c.dir, ".checked-files-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(c.dir, recordName))
}

func (c *Cache) mac(body []byte) []byte {
	m := hmac.New(sha256.New, c.key)
	m.Write(body)
	return m.Sum(nil)
}

// executableIdentity is this executable's Go build ID, read from its ELF
// note: the go command derives it from every input of the build, so any
// change to garm's code, a dependency or the toolchain changes it.
func executableIdentity() ([]byte, error) {
	path, err := os.Executable()
	if err != nil {
		return nil, err
	}
	f, err := elf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading this executable's build ID: %w", err)
	}
	defer f.Close()
	s := f.Section(".note.go.buildid")
	if s == nil {
		return nil, errors.New("this executable has no Go build ID note")
	}
	note, err := s.Data()
	if err != nil {
		return nil, err
	}
	return goBuildID(note, f.ByteOrder)
}

// goBuildID reads the ID from an ELF note: name size, description size,
// type 4, the name "Go" padded to four bytes, then the ID.
func goBuildID(note []byte, order binary.ByteOrder) ([]byte, error) {
	const tag = 4
	if len(note) < 16 {
		return nil, errors.New("this executable's build ID note is truncated")
	}
	nameSize := order.Uint32(note[0:])
	descSize := order.Uint32(note[4:])
	if nameSize != 4 || order.Uint32(note[8:]) != tag || string(note[12:16]) != "Go\x00\x00" || uint64(len(note)) < 16+uint64(descSize) || descSize == 0 {
		return nil, errors.New("this executable's build ID note is not Go's")
	}
	return bytes.Clone(note[16 : 16+descSize]), nil
}
