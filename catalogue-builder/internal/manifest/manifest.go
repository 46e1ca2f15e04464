package manifest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// SchemaV1 is the only manifest schema this garm-catalogue reads.
const SchemaV1 = "v1"

// Manifest is a catalogue.yaml that read without a problem.
type Manifest struct {
	Path     string    // the file as given
	Dir      string    // absolute directory of the file; include dirs resolve against it
	Schema   string    // always SchemaV1
	Name     string    // empty when absent
	Source   string    // free text for the artifact's provenance; empty when absent
	Include  []Include // at least one, each naming a different directory
	Taxonomy *Taxonomy // nil when the key is absent
	// Limits the deployment adds or tightens, in file order; empty when
	// the key is absent.
	Limits []Limit
}

// Include is one entry of the include list: a local proto import root.
type Include struct {
	Dir    string // as written
	Abs    string // absolute and cleaned: Dir itself when absolute, else joined to Manifest.Dir
	Line   int
	Column int
}

// Taxonomy is the manifest's declaration of the whole taxonomy. Either list
// may be empty (the key absent or `[]`): the catalogue then declares none of
// that kind, and files may not add any.
type Taxonomy struct {
	Compartments []Decl
	ToolSets     []Decl
	Attributes   []Attribute
}

// Attribute declares one principal attribute. Name is never empty; Type is
// one of "string", "int", "bool", "string_list", or empty when not given.
type Attribute struct {
	Name, Description, Type string
	MaxItems, MaxLen        uint32
	Line, Column            int
}

// Decl declares one compartment or tool set. Name is never empty; its format
// is the lint's to judge.
type Decl struct {
	Name        string
	Description string // may be empty
	Line        int
	Column      int
}

// Load reads the manifest at path, parses it as Parse does, and checks that
// every include directory exists and is a directory. A file that cannot be
// read is returned as the os error; anything wrong with its content,
// directories included, comes back together as Problems.
func Load(path string) (*Manifest, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m, problems, err := parse(path, data)
	if err != nil {
		return nil, err
	}
	for _, inc := range m.Include {
		if msg := checkDir(inc); msg != "" {
			problems = append(problems, Problem{Path: path, Line: inc.Line, Column: inc.Column, Message: msg})
		}
	}
	if len(problems) > 0 {
		return nil, problems.sorted()
	}
	return m, nil
}

// Parse reads a manifest from data as if it were the file at path. It touches
// no file: path only names the problems and anchors the include directories
// (its directory is made absolute against the working directory when
// relative). The error is Problems unless that directory cannot be made
// absolute.
func Parse(path string, data []byte) (*Manifest, error) {
	m, problems, err := parse(path, data)
	if err != nil {
		return nil, err
	}
	if len(problems) > 0 {
		return nil, problems.sorted()
	}
	return m, nil
}

// parse returns what could be read even when there are problems, so Load can
// check the directories of the entries that were well formed.
func parse(path string, data []byte) (*Manifest, Problems, error) {
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, nil, fmt.Errorf("manifest %s: %w", path, err)
	}
	r := &reader{path: path, dir: dir}
	m := r.read(data)
	m.Path, m.Dir = path, dir
	return m, r.problems, nil
}

// resolve makes an include directory absolute against the manifest's
// directory. `~` and environment variables are not expanded: the manifest
// means the same thing for every user and every shell.
func resolve(manifestDir, dir string) string {
	if filepath.IsAbs(dir) {
		return filepath.Clean(dir)
	}
	return filepath.Join(manifestDir, dir)
}

func checkDir(inc Include) string {
	info, err := os.Stat(inc.Abs)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		msg := fmt.Sprintf("include %q: no such directory (%s)", inc.Dir, inc.Abs)
		if strings.HasPrefix(inc.Dir, "~") {
			msg += `; "~" is not expanded`
		}
		return msg
	case err != nil:
		return fmt.Sprintf("include %q: %v", inc.Dir, err)
	case !info.IsDir():
		return fmt.Sprintf("include %q: not a directory (%s)", inc.Dir, inc.Abs)
	}
	return ""
}
