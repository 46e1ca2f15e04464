package diff

// A case is one file, testdata/<name>.txt, that says how its two sides
// differ from the contract every case shares, testdata/base/shop/v1/orders.proto:
//
//	# What the case proves, in one or more comment lines.
//	-- old: find --
//	lines of the base, exactly
//	-- old: replace --
//	what stands there on the old side
//	-- new: find --
//	...
//	-- new: replace --
//	...
//	-- want --
//	the exact lines Write prints for Compare(old, new); none for no change
//
// A section runs from its marker line, "-- name --", to the next. Each side
// starts from the base and applies its find/replace pairs in order; a find
// must stand exactly once in the text at that point, or the case fails. A
// side with no pair is the base itself. Old pairs come first, then new
// pairs, then want, which is last. go test -update rewrites only want.

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/catalogue-builder/internal/buildtest"
)

var update = flag.Bool("update", false, "rewrite the want section of every case under testdata/")

// baseContract is the contract every case edits.
var baseContract = filepath.Join("testdata", "base", "shop", "v1", "orders.proto")

func TestEveryCasePrintsItsWantedLines(t *testing.T) {
	for _, c := range loadCases(t) {
		t.Run(c.name, func(t *testing.T) {
			old, new := buildCase(t, c)
			var got bytes.Buffer
			if err := Write(&got, Compare(old, new)); err != nil {
				t.Fatal(err)
			}
			if *update {
				data, err := os.ReadFile(c.path)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(c.path, append(data[:c.wantAt:c.wantAt], got.Bytes()...), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got.String() != c.want {
				t.Errorf("%s: Compare(old, new) printed (go test -update rewrites its want section)\n%s\nwant\n%s", c.path, got.Bytes(), c.want)
			}
		})
	}
}

func TestTheOutputListsWideningThenNarrowingThenUnclear(t *testing.T) {
	changes := Compare(buildCase(t, loadCase(t, "order")))
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
	for _, c := range loadCases(t) {
		old, new := buildCase(t, c)
		for _, a := range []*artifact.Artifact{old, new} {
			if changes := Compare(a, a); len(changes) != 0 {
				t.Errorf("%s: Compare(a, a) = %v", c.path, changes)
			}
		}
	}
}

// Every widening read backwards is a narrowing and the other way round;
// unclear stays unclear. Counts may differ (a removed subtree is one line,
// a new one a line per field), the directions present may not.
func TestReversingACaseSwapsWideningAndNarrowing(t *testing.T) {
	for _, c := range loadCases(t) {
		old, new := buildCase(t, c)
		forward, backward := directions(Compare(old, new)), directions(Compare(new, old))
		swapped := map[Direction]bool{
			Widening:  forward[Narrowing],
			Narrowing: forward[Widening],
			Unclear:   forward[Unclear],
		}
		for _, d := range []Direction{Widening, Narrowing, Unclear} {
			if backward[d] != swapped[d] {
				t.Errorf("%s: forward has %v, backward has %v", c.path, forward, backward)
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

// built holds each contract's artifact by its text: every test compares
// the same contracts, many cases share a side, and building is the slow part.
var built sync.Map

// buildCase builds a case's two sides, each as the one file of an include
// root.
func buildCase(t *testing.T, c *diffCase) (old, new *artifact.Artifact) {
	t.Helper()
	side := func(text string) *artifact.Artifact {
		if a, ok := built.Load(text); ok {
			return a.(*artifact.Artifact)
		}
		root := t.TempDir()
		path := filepath.Join(root, "shop", "v1", "orders.proto")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		a := buildtest.Artifact(t, root)
		built.Store(text, a)
		return a
	}
	oldText, newText := c.sides(t)
	return side(oldText), side(newText)
}
