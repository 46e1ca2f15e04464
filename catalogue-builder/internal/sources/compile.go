package sources

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/bufbuild/protocompile"
	"github.com/bufbuild/protocompile/reporter"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// Set is what a catalogue is built from.
type Set struct {
	// Files are the catalogue's own files in import-path order: every file
	// found under the include roots, or every file of an image that is not
	// part of the linked vocabulary. Their imports, the vocabulary among
	// them, are reachable through each file's Imports.
	Files []protoreflect.FileDescriptor
	// Compiler says what produced the descriptors, for provenance.
	Compiler string
}

// Problems is every error found while reading sources, one per line, each
// naming where it is (file:line:col when there is a position).
type Problems []string

func (p Problems) Error() string { return strings.Join(p, "\n") }

// Compile compiles every .proto file under the include roots (absolute
// directories), with source information so comments become field docs.
// Import paths are relative to the root a file was found in. It reports
// every problem it finds at once: syntax and link errors with their
// positions, a file found under two roots, a file shadowing the linked
// vocabulary, a root with no .proto file at all.
func Compile(ctx context.Context, roots []string) (*Set, error) {
	names, onDisk, problems := findSources(roots)
	if len(problems) > 0 {
		return nil, problems
	}
	compiler := protocompile.Compiler{
		Resolver: protocompile.CompositeResolver{
			protocompile.ResolverFunc(resolveLinked),
			&protocompile.SourceResolver{ImportPaths: roots},
		},
		SourceInfoMode: protocompile.SourceInfoStandard,
		Reporter: reporter.NewReporter(func(err reporter.ErrorWithPos) error {
			problems = append(problems, describe(err, onDisk))
			return nil
		}, nil),
	}
	compiled, err := compiler.Compile(ctx, names...)
	if len(problems) > 0 {
		return nil, problems
	}
	if err != nil {
		// Some failures (an import that resolves nowhere) come back
		// rather than through the reporter.
		if withPos, ok := errors.AsType[reporter.ErrorWithPos](err); ok {
			return nil, Problems{describe(withPos, onDisk)}
		}
		return nil, Problems{err.Error()}
	}
	set := &Set{Compiler: compilerName()}
	for _, f := range compiled {
		set.Files = append(set.Files, f)
	}
	return set, nil
}

// findSources lists every .proto file under the roots by import path,
// sorted, and where each is on disk.
func findSources(roots []string) ([]string, map[string]string, Problems) {
	var problems Problems
	onDisk := map[string]string{}
	for _, root := range roots {
		found := 0
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || filepath.Ext(path) != ".proto" {
				return nil
			}
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			name := filepath.ToSlash(rel)
			found++
			switch {
			case IsLinkedPath(name):
				problems = append(problems, fmt.Sprintf("%s: %s is garm-catalogue's own vocabulary (garm/, buf/validate/ and google/protobuf/ resolve from the descriptors linked into it); remove the copy from the include roots", display(path), name))
			case onDisk[name] != "":
				problems = append(problems, fmt.Sprintf("%s: %s is also found as %s; an import path must name one file", display(path), name, display(onDisk[name])))
			default:
				onDisk[name] = path
			}
			return nil
		})
		if err != nil {
			problems = append(problems, fmt.Sprintf("reading include root %s: %v", display(root), err))
		} else if found == 0 {
			problems = append(problems, fmt.Sprintf("%s: include root holds no .proto file", display(root)))
		}
	}
	names := make([]string, 0, len(onDisk))
	for name := range onDisk {
		names = append(names, name)
	}
	slices.Sort(names)
	return names, onDisk, problems
}

func resolveLinked(path string) (protocompile.SearchResult, error) {
	if fd, ok := Linked(path); ok {
		return protocompile.SearchResult{Desc: fd}, nil
	}
	return protocompile.SearchResult{}, protoregistry.NotFound
}

// describe renders a compile error as "<file on disk>:<line>:<col>: <what>".
func describe(err reporter.ErrorWithPos, onDisk map[string]string) string {
	pos := err.GetPosition()
	file := pos.Filename
	if path, ok := onDisk[file]; ok {
		file = display(path)
	}
	var inner error = err
	if unwrapped := errors.Unwrap(err); unwrapped != nil {
		inner = unwrapped
	}
	if pos.Line == 0 {
		return fmt.Sprintf("%s: %v", file, inner)
	}
	return fmt.Sprintf("%s:%d:%d: %v", file, pos.Line, pos.Col, inner)
}

// display is a path relative to the working directory when it is under it.
func display(path string) string {
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, path); err == nil && !strings.HasPrefix(rel, "..") {
			return rel
		}
	}
	return path
}

// compilerName is "protocompile <version>" as linked into this binary.
func compilerName() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/bufbuild/protocompile" {
				return "protocompile " + dep.Version
			}
		}
	}
	return "protocompile"
}
