package atomicfile_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/garm-dev/garm/internal/atomicfile"
)

func TestWriteReplacesWholeWithTheModeAndLeavesNothingBeside(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	for _, data := range []string{"first", "second, longer"} {
		if err := atomicfile.Write(path, []byte(data), 0o640); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != data {
			t.Fatalf("%q, %v", got, err)
		}
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v, %v", info.Mode(), err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("%d files in the directory, want the one written", len(entries))
	}
	if err := atomicfile.Write(filepath.Join(dir, "missing", "f"), []byte("x"), 0o600); err == nil {
		t.Fatal("wrote into a directory that does not exist")
	}
}

func TestOfCreatorsRacingTheFirstWinsAndTheOthersLearnIt(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "key")
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { errs[i] = atomicfile.Create(path, []byte{byte('a' + i)}, 0o600) })
	}
	wg.Wait()
	created := 0
	for _, err := range errs {
		switch {
		case err == nil:
			created++
		case !errors.Is(err, fs.ErrExist):
			t.Fatal(err)
		}
	}
	if created != 1 {
		t.Fatalf("%d creators created the file", created)
	}
	if err := atomicfile.Create(path, []byte("late"), 0o600); err == nil || err.Error() != "create "+path+": "+fs.ErrExist.Error() {
		t.Fatalf("a late creator: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("%d files in the directory, want the one created", len(entries))
	}
}

// TestWriteFromLeavesTheFileAsItWasWhenFillFails: what fill wrote before
// failing never reaches path, and nothing is left beside it.
func TestWriteFromLeavesTheFileAsItWasWhenFillFails(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rows")
	if err := atomicfile.WriteFrom(path, 0o600, func(w io.Writer) error {
		_, err := io.WriteString(w, "whole")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	broken := errors.New("the stream broke")
	err := atomicfile.WriteFrom(path, 0o600, func(w io.Writer) error {
		_, _ = io.WriteString(w, "half of a")
		return broken
	})
	if !errors.Is(err, broken) {
		t.Fatalf("%v, want the fill's error", err)
	}
	if got, err := os.ReadFile(path); err != nil || string(got) != "whole" {
		t.Fatalf("%q, %v", got, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("%d files in the directory, want the one written", len(entries))
	}
}
