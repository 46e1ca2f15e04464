package main

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// The image test builds each command static once (a few seconds once the
// build cache holds its packages), then builds its image twice from it.
const testVersion = "v0.0.0-image-test"

var testTime = time.Date(2026, 12, 5, 1, 2, 3, 0, time.UTC)

func TestEachImageIsReproducibleRunsAsNonRootWithoutAShellAndPrintsItsVersion(t *testing.T) {
	t.Parallel()
	if len(commands) != 2 {
		t.Fatalf("images of %d commands; this test knows garmd's and garm-approvals'", len(commands))
	}
	for _, c := range commands {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			checkImage(t, c)
		})
	}
}

func checkImage(t *testing.T, c command) {
	dir := t.TempDir()
	bin := filepath.Join(dir, c.Name+"-built")
	c.Package = filepath.Join("../..", c.Package)
	if err := buildBinary(context.Background(), c.Package, bin, testVersion); err != nil {
		t.Fatal(err)
	}
	first, second := filepath.Join(dir, "first.oci.tar"), filepath.Join(dir, "second.oci.tar")
	d1, err := writeImage(first, c, bin, testVersion, testTime)
	if err != nil {
		t.Fatal(err)
	}
	d2, err := writeImage(second, c, bin, testVersion, testTime)
	if err != nil {
		t.Fatal(err)
	}
	b1, _ := os.ReadFile(first)
	b2, _ := os.ReadFile(second)
	if d1 != d2 || !bytes.Equal(b1, b2) {
		t.Fatalf("two builds differ: %s and %s", d1, d2)
	}

	// Unpack the layout tarball as a runtime would, and read the image back.
	unpacked := filepath.Join(dir, "layout")
	extract(t, first, unpacked)
	idx, err := layout.ImageIndexFromPath(unpacked)
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := idx.IndexManifest()
	if err != nil || len(manifest.Manifests) != 1 {
		t.Fatalf("the layout holds %v images: %v", manifest, err)
	}
	if manifest.Manifests[0].Digest != d1 || manifest.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != testVersion {
		t.Fatalf("the layout's image is %s %v, want %s named %s", manifest.Manifests[0].Digest, manifest.Manifests[0].Annotations, d1, testVersion)
	}
	img, err := idx.Image(d1)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Config.Entrypoint; !slices.Equal(got, []string{"/" + c.Name}) {
		t.Errorf("entrypoint %q, want [/%s]", got, c.Name)
	}
	if got := cfg.Config.User; got != "65532:65532" {
		t.Errorf("user %q, want a numeric user that is not root", got)
	}
	if !cfg.Created.Time.Equal(testTime) {
		t.Errorf("created %s, want the commit's time %s", cfg.Created.Time, testTime)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%d layers: %v", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	rootfs := filepath.Join(dir, "rootfs")
	names := untar(t, rc, rootfs)
	want := []string{"etc/", "etc/passwd", "etc/ssl/", "etc/ssl/certs/", "etc/ssl/certs/ca-certificates.crt", c.Name}
	if !slices.Equal(names, want) {
		t.Errorf("the image holds %q, want exactly %q (no shell, nothing else)", names, want)
	}
	for _, shell := range []string{"bin/sh", "bin/bash", "bin/busybox"} {
		if _, err := os.Lstat(filepath.Join(rootfs, shell)); err == nil {
			t.Errorf("the image holds /%s", shell)
		}
	}

	// The binary from the image runs, alone, and says which version it is.
	out, err := exec.Command(filepath.Join(rootfs, c.Name), "version").CombinedOutput()
	if want := c.Name + " " + testVersion; err != nil || strings.TrimSpace(string(out)) != want {
		t.Fatalf("%s version from the image: %v %q, want %q", c.Name, err, out, want)
	}
	if out, err := exec.Command("go", "version", "-m", filepath.Join(rootfs, c.Name)).Output(); err != nil || !strings.Contains(string(out), "CGO_ENABLED=0") {
		t.Errorf("the image's %s is not a static build: %v\n%s", c.Name, err, out)
	}
}

// extract unpacks the tar file at path into dir.
func extract(t *testing.T, path, dir string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	untar(t, f, dir)
}

// untar unpacks r into dir and answers the entries' names in order,
// refusing anything but files and folders inside dir.
func untar(t *testing.T, r io.Reader, dir string) []string {
	t.Helper()
	var names []string
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if h.Uid != 0 || h.Gid != 0 || !h.ModTime.Equal(testTime) {
			t.Errorf("%s: owner %d:%d, time %s; want root's, at the commit's time", h.Name, h.Uid, h.Gid, h.ModTime)
		}
		target := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(target, dir+string(filepath.Separator)) {
			t.Fatalf("%s escapes the folder", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(target, data, os.FileMode(h.Mode)); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("%s: a tar entry of type %c", h.Name, h.Typeflag)
		}
	}
}
