package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/garm-dev/garm/catalogue-builder/builder"
	"go.yaml.in/yaml/v3"
)

// module is the module whose root holds the example sources.
const module = "github.com/garm-dev/garm"

// calculatorRoot is the calculator's proto root, relative to the repository
// root: the dev stack serves it beside the bank.
const calculatorRoot = "examples/calculator/proto"

// repoRoot finds the repository root: the directory of the go.mod that
// declares the module, above this source file (where `go run` and `go
// test` compiled it) or else above the working directory.
func repoRoot() (string, error) {
	var starts []string
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		starts = append(starts, filepath.Dir(file))
	}
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	for _, dir := range starts {
		for {
			if declaresModule(filepath.Join(dir, "go.mod")) {
				return dir, nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", fmt.Errorf("cannot find the repository root (a go.mod declaring %s) above the sources or the working directory; run from the repository", module)
}

func declaresModule(gomod string) bool {
	data, err := os.ReadFile(gomod)
	if err != nil {
		return false
	}
	s := bufio.NewScanner(bytes.NewReader(data))
	for s.Scan() {
		if fields := strings.Fields(s.Text()); len(fields) == 2 && fields[0] == "module" {
			return fields[1] == module
		}
	}
	return false
}

// buildCatalogue builds, from source, the catalogue of the manifest with
// the extra proto roots added to its include list, and writes the artifact
// into dir. It answers the artifact's path and the built catalogue. The
// manifest stays the source of truth for name, provenance and taxonomy; the
// combined manifest is written beside the artifact, its include directories
// made absolute.
func buildCatalogue(ctx context.Context, manifest, dir string, extraRoots ...string) (string, *builder.Catalogue, error) {
	combined, err := withIncludes(manifest, extraRoots)
	if err != nil {
		return "", nil, fmt.Errorf("catalogue manifest %s: %w", manifest, err)
	}
	combinedPath := filepath.Join(dir, "catalogue.yaml")
	if err := os.WriteFile(combinedPath, combined, 0o600); err != nil {
		return "", nil, err
	}
	c, err := builder.FromManifest(ctx, combinedPath)
	if err != nil {
		return "", nil, fmt.Errorf("building the catalogue of %s: %w", manifest, err)
	}
	path := filepath.Join(dir, "catalogue.binpb")
	if err := os.WriteFile(path, c.Bytes, 0o600); err != nil {
		return "", nil, err
	}
	return path, c, nil
}

// withIncludes is the manifest at path with every include directory made
// absolute against the manifest's directory, and each extra root (absolute)
// appended unless it is included already.
func withIncludes(path string, extraRoots []string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("not a mapping of keys")
	}
	top := doc.Content[0]
	var include *yaml.Node
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value == "include" {
			include = top.Content[i+1]
		}
	}
	if include == nil || include.Kind != yaml.SequenceNode {
		return nil, errors.New(`no "include" list`)
	}
	manifestDir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	var roots []string
	for _, n := range include.Content {
		if n.Kind == yaml.ScalarNode && !filepath.IsAbs(n.Value) {
			n.Value = filepath.Join(manifestDir, n.Value)
		}
		roots = append(roots, filepath.Clean(n.Value))
	}
	for _, root := range extraRoots {
		if !slices.Contains(roots, filepath.Clean(root)) {
			include.Content = append(include.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: root})
		}
	}
	return yaml.Marshal(&doc)
}
