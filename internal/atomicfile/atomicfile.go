package atomicfile

import (
	"bufio"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Write writes data to path with mode, replacing what was there.
func Write(path string, data []byte, mode fs.FileMode) error {
	return replace(path, mode, writeAll(data))
}

// WriteFrom writes to path with mode what fill writes, through a buffer,
// replacing what was there: for a file too large to hold in memory first.
// When fill fails, path is left as it was.
func WriteFrom(path string, mode fs.FileMode, fill func(io.Writer) error) error {
	return replace(path, mode, func(f io.Writer) error {
		w := bufio.NewWriterSize(f, 1<<20)
		if err := fill(w); err != nil {
			return err
		}
		return w.Flush()
	})
}

func replace(path string, mode fs.FileMode, fill func(io.Writer) error) error {
	tmp, err := temp(path, mode, fill)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	return os.Rename(tmp, path)
}

func writeAll(data []byte) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}
}

// Create writes data to path with mode unless something is there already,
// and then answers an error that is fs.ErrExist and leaves it alone: the
// temporary file is linked into place, never renamed over it, so of two
// writers racing to create one file the first wins and the second learns it.
func Create(path string, data []byte, mode fs.FileMode) error {
	tmp, err := temp(path, mode, writeAll(data))
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			// Named by the path asked for, not the temporary one.
			return &fs.PathError{Op: "create", Path: path, Err: fs.ErrExist}
		}
		return err
	}
	return nil
}

// temp writes what fill writes to a new file beside path, with mode, synced
// and closed, and answers its name; the caller removes it.
func temp(path string, mode fs.FileMode, fill func(io.Writer) error) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return "", err
	}
	name := f.Name()
	err = fill(f)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return "", err
	}
	return name, nil
}
