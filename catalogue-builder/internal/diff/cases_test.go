package diff

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/internal/artifact"
	"github.com/garm-dev/garm/catalogue-builder/internal/buildtest"
)

var update = flag.Bool("update", false, "rewrite the want.txt of every case under testdata/")

// A case is a folder under testdata/ holding old/ and new/, each an include
// root with one small .proto, and want.txt with exactly the lines Write
// prints for Compare(old, new). The package comment of each .proto says what
// the case changes.
func TestEveryCasePrintsItsWantedLines(t *testing.T) {
	for _, dir := range caseDirs(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			old, new := buildCase(t, dir)
			var got bytes.Buffer
			if err := Write(&got, Compare(old, new)); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "want.txt")
			if *update {
				if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test -update writes it)", err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("Compare(old, new) printed (go test -update rewrites want.txt)\n%s\nwant\n%s", got.Bytes(), want)
			}
		})
	}
}

func TestTheOutputListsWideningThenNarrowingThenUnclear(t *testing.T) {
	changes := Compare(buildCase(t, filepath.Join("testdata", "order")))
	var seen []Direction
	for _, c := range changes {
		if !slices.Contains(seen, c.Direction) {
			seen = append(seen, c.Direction)
		}
	}
	if want := []Direction{Widening, Narrowing, Unclear}; !slices.Equal(seen, want) {
		t.Fatalf("directions appear in the order %v, want %v:\n%v", seen, want, changes)
	}
	if !slices.IsSortedFunc(changes, func(a, b Change) int { return int(a.Direction) - int(b.Direction) }) {
		t.Errorf("directions are interleaved: %v", changes)
	}
}

func TestACatalogueComparedWithItselfHasNoChange(t *testing.T) {
	for _, dir := range caseDirs(t) {
		old, new := buildCase(t, dir)
		for _, a := range []*artifact.Artifact{old, new} {
			if changes := Compare(a, a); len(changes) != 0 {
				t.Errorf("%s: Compare(a, a) = %v", dir, changes)
			}
		}
	}
}

// Every widening read backwards is a narrowing and the other way round;
// unclear stays unclear. Counts may differ (a removed subtree is one line,
// a new one a line per field), the directions present may not.
func TestReversingACaseSwapsWideningAndNarrowing(t *testing.T) {
	for _, dir := range caseDirs(t) {
		old, new := buildCase(t, dir)
		forward, backward := directions(Compare(old, new)), directions(Compare(new, old))
		swapped := map[Direction]bool{
			Widening:  forward[Narrowing],
			Narrowing: forward[Widening],
			Unclear:   forward[Unclear],
		}
		for _, d := range []Direction{Widening, Narrowing, Unclear} {
			if backward[d] != swapped[d] {
				t.Errorf("%s: forward has %v, backward has %v", filepath.Base(dir), forward, backward)
				break
			}
		}
	}
}

func directions(changes []Change) map[Direction]bool {
	out := map[Direction]bool{}
	for _, c := range changes {
		out[c.Direction] = true
	}
	return out
}

func caseDirs(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join("testdata", "*", "old"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no cases under testdata/: %v", err)
	}
	for i, d := range dirs {
		dirs[i] = filepath.Dir(d)
	}
	return dirs
}

// built holds each include root's artifact: every test compares the same
// fixtures, and building is the slow part.
var built sync.Map

// buildCase builds a case's two sides.
func buildCase(t *testing.T, dir string) (old, new *artifact.Artifact) {
	t.Helper()
	side := func(root string) *artifact.Artifact {
		if a, ok := built.Load(root); ok {
			return a.(*artifact.Artifact)
		}
		a := buildtest.Artifact(t, root)
		built.Store(root, a)
		return a
	}
	return side(filepath.Join(dir, "old")), side(filepath.Join(dir, "new"))
}
