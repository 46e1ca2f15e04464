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
	"github.com/garm-dev/garm/internal/atomicfile"
)

const (
	keyName    = "key"
	recordName = "checked-files"
	// version opens a record; a record of another version is not used.
	version = "garm check cache 2\n"
	keySize = 32
	// maxKeys bounds each list of a record, and so what reading one may
	// allocate (8 MiB a list): a catalogue of more descriptor files than
	// that, far beyond any served, is not recorded, and its starts check
	// every file.
	maxKeys = 1 << 18
	// maxIdentity bounds the executable's identity as recorded.
	maxIdentity = 1 << 10
)

// Cache is one check-cache directory, opened by this executable.
type Cache struct {
	dir      string
	key      []byte
	identity []byte

	mu sync.Mutex
	// recorded is what the record holds, as this process last read or
	// wrote it; a Write of the same writes nothing.
	recorded Checks
}

// Checks are what a record vouches for, each list sorted: the keys of the
// descriptor files built with every check (artifact.Checked), and the keys
// of the files whose tool inputs' validation rules compiled at a mount
// (catalogue.Options.Validated).
type Checks struct {
	Files, Validated []artifact.FileKey
}

func (c Checks) equal(d Checks) bool {
	return slices.Equal(c.Files, d.Files) && slices.Equal(c.Validated, d.Validated)
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
// created whole (atomicfile.Create), so that two garmds starting at once
// agree on one key and neither reads half of it.
func readOrMakeKey(path string) ([]byte, error) {
	if key, err := readKey(path); !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	key := make([]byte, keySize)
	rand.Read(key)
	if err := atomicfile.Create(path, key, 0o600); err != nil && !errors.Is(err, fs.ErrExist) {
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

// Read is what the record vouches for. With no record yet it answers
// nothing and no error; a record it cannot use answers nothing and why,
// and the load checks every file and the mount compiles every input.
func (c *Cache) Read() (Checks, error) {
	f, err := os.Open(filepath.Join(c.dir, recordName))
	if errors.Is(err, fs.ErrNotExist) {
		return Checks{}, nil
	}
	if err != nil {
		return Checks{}, err
	}
	defer f.Close()
	limit := int64(len(version)) + 2 + maxIdentity + 2*(4+maxKeys*sha256.Size) + sha256.Size
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return Checks{}, err
	}
	if int64(len(data)) > limit {
		return Checks{}, errors.New("the record is larger than a catalogue can need")
	}
	checks, err := c.verify(data)
	if err != nil {
		return Checks{}, err
	}
	c.mu.Lock()
	c.recorded = checks
	c.mu.Unlock()
	return checks, nil
}

// verify reads a record's checks once its MAC and identity hold.
func (c *Cache) verify(data []byte) (Checks, error) {
	if len(data) < sha256.Size {
		return Checks{}, errors.New("the record is truncated")
	}
	body, sum := data[:len(data)-sha256.Size], data[len(data)-sha256.Size:]
	if !hmac.Equal(sum, c.mac(body)) {
		return Checks{}, errors.New("the record's MAC does not verify under this deployment's key")
	}
	rest, ok := bytes.CutPrefix(body, []byte(version))
	if !ok {
		return Checks{}, errors.New("the record is of another version")
	}
	if len(rest) < 2 {
		return Checks{}, errors.New("the record is truncated")
	}
	n := int(binary.BigEndian.Uint16(rest))
	rest = rest[2:]
	if n > len(rest) {
		return Checks{}, errors.New("the record is truncated")
	}
	if !bytes.Equal(rest[:n], c.identity) {
		return Checks{}, errors.New("the record was written by another executable")
	}
	rest = rest[n:]
	var checks Checks
	var err error
	if checks.Files, rest, err = readKeys(rest); err != nil {
		return Checks{}, err
	}
	if checks.Validated, rest, err = readKeys(rest); err != nil {
		return Checks{}, err
	}
	if len(rest) != 0 {
		return Checks{}, errors.New("the record's keys are not as many as it says")
	}
	return checks, nil
}

// readKeys reads a count and that many keys.
func readKeys(b []byte) ([]artifact.FileKey, []byte, error) {
	if len(b) < 4 {
		return nil, nil, errors.New("the record is truncated")
	}
	count := int(binary.BigEndian.Uint32(b))
	b = b[4:]
	if count > maxKeys || len(b) < count*sha256.Size {
		return nil, nil, errors.New("the record's keys are not as many as it says")
	}
	keys := make([]artifact.FileKey, count)
	for i := range keys {
		copy(keys[i][:], b[i*sha256.Size:])
	}
	return keys, b[count*sha256.Size:], nil
}

// Write replaces the record with checks — a mounted generation's
// (catalogue.Generation.FileKeys, ValidatedKeys) — unless it holds them
// already. It answers whether it wrote.
func (c *Cache) Write(checks Checks) (bool, error) {
	if len(checks.Files) > maxKeys || len(checks.Validated) > maxKeys {
		return false, fmt.Errorf("%d descriptor files are more than a record holds", max(len(checks.Files), len(checks.Validated)))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.recorded.equal(checks) {
		return false, nil
	}
	body := make([]byte, 0, len(version)+2+len(c.identity)+8+(len(checks.Files)+len(checks.Validated))*sha256.Size+sha256.Size)
	body = append(body, version...)
	body = binary.BigEndian.AppendUint16(body, uint16(len(c.identity)))
	body = append(body, c.identity...)
	for _, keys := range [][]artifact.FileKey{checks.Files, checks.Validated} {
		body = binary.BigEndian.AppendUint32(body, uint32(len(keys)))
		for _, k := range keys {
			body = append(body, k[:]...)
		}
	}
	if err := atomicfile.Write(filepath.Join(c.dir, recordName), append(body, c.mac(body)...), 0o600); err != nil {
		return false, err
	}
	c.recorded = Checks{Files: slices.Clone(checks.Files), Validated: slices.Clone(checks.Validated)}
	return true, nil
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
