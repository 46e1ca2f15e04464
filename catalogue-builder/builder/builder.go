package builder

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/catalogue-builder/internal/build"
	"github.com/garm-dev/garm/catalogue-builder/internal/manifest"
)

// Producer is what catalogues built through this package record as their
// producer.
const Producer = "garm-catalogue/library"

// Catalogue is a built catalogue: the artifact's bytes and the same bytes
// read back.
type Catalogue struct {
	Bytes    []byte
	Artifact *artifact.Artifact
}

// FromManifest builds the catalogue a catalogue.yaml describes; its include
// roots are relative to the manifest's directory.
func FromManifest(ctx context.Context, path string) (*Catalogue, error) {
	m, err := manifest.Load(path)
	if err != nil {
		return nil, err
	}
	return run(ctx, m)
}

// FromRoots builds the catalogue of every .proto file under the include
// roots, with the taxonomy the files declare.
func FromRoots(ctx context.Context, roots ...string) (*Catalogue, error) {
	m := &manifest.Manifest{Path: "catalogue.yaml", Schema: "v1"}
	for _, root := range roots {
		abs, err := filepath.Abs(root)
		if err != nil {
			return nil, err
		}
		m.Include = append(m.Include, manifest.Include{Dir: root, Abs: abs})
	}
	return run(ctx, m)
}

func run(ctx context.Context, m *manifest.Manifest) (*Catalogue, error) {
	res, err := build.Run(ctx, build.Input{Manifest: m, Producer: Producer})
	if refused := (*build.Refused)(nil); errors.As(err, &refused) {
		return nil, fmt.Errorf("%w:\n%s", err, refused.Diagnostics.String())
	}
	if err != nil {
		return nil, err
	}
	return &Catalogue{Bytes: res.Bytes, Artifact: res.Artifact}, nil
}
