package devplane

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Reload builds the catalogue again from its manifest and, when it builds
// (compiles and lints), serves it: the bus admits the identities it
// implies, garmd restarts on it at the same addresses, and the quick-start
// is rendered again, the catalogue signed with a higher version than the
// one before. When it does not build, the error carries every
// diagnostic and the previous catalogue goes on being served. An artifact
// named as the catalogue is read again.
func (s *Plane) Reload(ctx context.Context) error {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	staged := filepath.Join(s.runDir, "staged.binpb")
	c, err := loadCatalogue(ctx, s.opts.Catalogue, staged, s.opts.ExtraRoots)
	if err != nil {
		return err
	}
	if err := s.ids.derive(c.Artifact); err != nil {
		return err
	}
	if err := s.bus.admit(s.ids.users); err != nil {
		return err
	}
	if err := s.stopRunningDaemon(ctx); err != nil {
		return err
	}
	if err := os.Rename(staged, s.cataloguePath()); err != nil {
		return err
	}
	// Each rebuild is signed with a higher version than the last.
	if err := s.signer.sign(s.cataloguePath(), c.Bytes); err != nil {
		return err
	}
	s.quickStartMu.Lock()
	s.catalogue = c
	s.quickStartMu.Unlock()
	if err := s.startDaemon(ctx); err != nil {
		s.fail(err)
		return err
	}
	return s.renderQuickStart()
}

// Watch polls the manifest and every .proto file under its include roots
// every interval and calls changed after each change, until ctx is done.
// It watches nothing when the catalogue is a built artifact.
func (s *Plane) Watch(ctx context.Context, interval time.Duration, changed func()) {
	if !isManifest(s.opts.Catalogue) {
		return
	}
	last := s.sourcesStamp()
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.stopped:
			return
		case <-ticker.C:
		}
		if now := s.sourcesStamp(); now != last {
			last = now
			changed()
		}
	}
}

// sourcesStamp is a fingerprint of the manifest and its proto sources:
// each file's path, size and modification time.
func (s *Plane) sourcesStamp() string {
	var b strings.Builder
	stamp := func(path string) {
		if info, err := os.Stat(path); err == nil {
			fmt.Fprintf(&b, "%s %d %d\n", path, info.Size(), info.ModTime().UnixNano())
		}
	}
	stamp(s.opts.Catalogue)
	for _, root := range sourceRoots(s.opts.Catalogue) {
		_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(path, ".proto") {
				stamp(path)
			}
			return nil
		})
	}
	return b.String()
}

// sourceRoots are the manifest's include directories, absolute; none when
// it cannot be read (the next build says why).
func sourceRoots(manifest string) []string {
	combined, err := withIncludes(manifest, nil)
	if err != nil {
		return nil
	}
	var m struct {
		Include []string `yaml:"include"`
	}
	if yaml.Unmarshal(combined, &m) != nil {
		return nil
	}
	return m.Include
}
