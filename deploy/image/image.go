package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// caCertificates is where a Debian machine keeps its CA bundle, and where
// the image keeps it too (Go's crypto/x509 looks there first).
const caCertificates = "/etc/ssl/certs/ca-certificates.crt"

// user is the image's user and group: not root, and numeric, so that a
// runtime that refuses root can check it without reading /etc/passwd.
const user = "65532:65532"

// passwd names that user, for the tools that look one up.
const passwd = "nonroot:x:65532:65532:nonroot:/nonexistent:/sbin/nologin\n"

// file is one entry of the image's one layer.
type file struct {
	name string // without a leading slash
	mode int64
	data []byte // nil for a folder
}

// layerFiles are the image's files: the binary at /<name>, the CA
// certificates and /etc/passwd, with the folders that hold them.
func layerFiles(c command, binary string) ([]file, error) {
	bin, err := os.ReadFile(binary)
	if err != nil {
		return nil, err
	}
	certs, err := os.ReadFile(caCertificates)
	if err != nil {
		return nil, fmt.Errorf("the CA certificates: %w (Debian: apt-get install -y ca-certificates)", err)
	}
	return []file{
		{name: "etc/", mode: 0o755},
		{name: "etc/passwd", mode: 0o644, data: []byte(passwd)},
		{name: "etc/ssl/", mode: 0o755},
		{name: "etc/ssl/certs/", mode: 0o755},
		{name: caCertificates[1:], mode: 0o644, data: certs},
		{name: c.Name, mode: 0o755, data: bin},
	}, nil
}

// layerTar writes files as a tar with every entry owned by root, at the
// time at, in name order.
func layerTar(files []file, at time.Time) ([]byte, error) {
	sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{Name: f.name, Mode: f.mode, ModTime: at, Format: tar.FormatPAX, Typeflag: tar.TypeReg, Size: int64(len(f.data))}
		if f.data == nil {
			h.Typeflag, h.Size = tar.TypeDir, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// buildImage is c's image around binary, every time in it at.
func buildImage(c command, binary, version string, at time.Time) (v1.Image, error) {
	files, err := layerFiles(c, binary)
	if err != nil {
		return nil, err
	}
	tarred, err := layerTar(files, at)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(tarred)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	base := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	base = mutate.ConfigMediaType(base, types.OCIConfigJSON)
	created := v1.Time{Time: at}
	img, err := mutate.Append(base, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History:   v1.History{Created: created, CreatedBy: "go run ./deploy/image", Comment: c.Name + " " + version},
	})
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.Created = created
	cfg.OS, cfg.Architecture = "linux", runtime.GOARCH
	cfg.Author = "garm"
	cfg.Config = v1.Config{
		Entrypoint: []string{"/" + c.Name},
		Cmd:        c.Cmd,
		User:       user,
		WorkingDir: "/",
		Env:        []string{"SSL_CERT_FILE=" + caCertificates},
		Labels: map[string]string{
			"org.opencontainers.image.title":   c.Name,
			"org.opencontainers.image.version": version,
			"org.opencontainers.image.source":  "https://github.com/garm-dev/garm",
		},
	}
	return mutate.ConfigFile(img, cfg)
}

// writeImage builds c's image and writes it to path as an OCI image layout
// in a tar file, answering the image's digest.
func writeImage(path string, c command, binary, version string, at time.Time) (v1.Hash, error) {
	img, err := buildImage(c, binary, version, at)
	if err != nil {
		return v1.Hash{}, err
	}
	digest, err := img.Digest()
	if err != nil {
		return v1.Hash{}, err
	}
	dir, err := os.MkdirTemp("", "garm-oci-")
	if err != nil {
		return v1.Hash{}, err
	}
	defer os.RemoveAll(dir)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return v1.Hash{}, err
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": version,
	})); err != nil {
		return v1.Hash{}, err
	}
	return digest, tarFolder(path, dir, at)
}

// tarFolder writes dir's files into a tar at path, sorted, owned by root,
// every time at.
func tarFolder(path, dir string, at time.Time) error {
	var files []file
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			files = append(files, file{name: rel + "/", mode: 0o755})
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files = append(files, file{name: rel, mode: 0o644, data: data})
		return nil
	})
	if err != nil {
		return err
	}
	tarred, err := layerTar(files, at)
	if err != nil {
		return err
	}
	return os.WriteFile(path, tarred, 0o644)
}
