package devplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/catalogue-builder/builder"
	"github.com/garm-dev/garm/internal/atomicfile"
	"go.yaml.in/yaml/v3"
)

// loadCatalogue writes to out the artifact of location: a catalogue.yaml
// built from source with extraRoots added, or a built artifact read as it
// is. The file is replaced only once the new catalogue is whole, so a
// failed build leaves the previous one in place.
func loadCatalogue(ctx context.Context, location, out string, extraRoots []string) (*builder.Catalogue, error) {
	if isManifest(location) {
		return buildCatalogue(ctx, location, out, extraRoots...)
	}
	data, a, err := artifact.ReadFileBytes(location)
	if err != nil {
		return nil, fmt.Errorf("--catalogue: %w", err)
	}
	if err := atomicfile.Write(out, data, 0o600); err != nil {
		return nil, err
	}
	return &builder.Catalogue{Artifact: a, Bytes: data}, nil
}

// isManifest reports whether path names a catalogue manifest rather than
// a built artifact: by its extension, as the two are named.
func isManifest(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	return ext == ".yaml" || ext == ".yml"
}

// buildCatalogue builds, from source, the catalogue of the manifest with
// the extra proto roots added to its include list, and writes the artifact
// to out. It answers the built catalogue. The
// manifest stays the source of truth for name, provenance and taxonomy; the
// combined manifest is written beside the artifact, its include directories
// made absolute.
func buildCatalogue(ctx context.Context, manifest, out string, extraRoots ...string) (*builder.Catalogue, error) {
	combined, err := withIncludes(manifest, extraRoots)
	if err != nil {
		return nil, fmt.Errorf("catalogue manifest %s: %w", manifest, err)
	}
	combinedPath := filepath.Join(filepath.Dir(out), "catalogue.yaml")
	if err := os.WriteFile(combinedPath, combined, 0o600); err != nil {
		return nil, err
	}
	c, err := builder.FromManifest(ctx, combinedPath)
	if err != nil {
		return nil, fmt.Errorf("building the catalogue of %s: %w", manifest, err)
	}
	if err := atomicfile.Write(out, c.Bytes, 0o600); err != nil {
		return nil, err
	}
	return c, nil
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
