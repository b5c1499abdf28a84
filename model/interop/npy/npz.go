package npy

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// MaxEntries bounds the number of arrays in an .npz archive.
const MaxEntries = 1 << 16

// DecodeNPZ reads every array of the size-byte .npz archive r, in archive
// order, each named after its entry without the ".npy" suffix. Stored and
// deflated entries are accepted; CRC-32 checksums are verified. Errors name
// the entry.
func DecodeNPZ(r io.ReaderAt, size int64) ([]Array, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) { // entries are only named, never extracted
		return nil, fmt.Errorf("not a valid zip archive: %w", err)
	}
	if len(zr.File) > MaxEntries {
		return nil, fmt.Errorf("%d entries exceed the limit of %d", len(zr.File), MaxEntries)
	}
	arrays := make([]Array, 0, len(zr.File))
	seen := make(map[string]bool, len(zr.File))
	for _, f := range zr.File {
		name, ok := strings.CutSuffix(f.Name, ".npy")
		if !ok || name == "" {
			return nil, fmt.Errorf("entry %q is not a NAME.npy array", f.Name)
		}
		if seen[name] {
			return nil, fmt.Errorf("entry %q appears twice", f.Name)
		}
		seen[name] = true
		a, err := decodeEntry(f)
		if err != nil {
			return nil, fmt.Errorf("entry %q: %w", f.Name, err)
		}
		a.Name = name
		arrays = append(arrays, *a)
	}
	return arrays, nil
}

func decodeEntry(f *zip.File) (*Array, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return Decode(rc)
}

// ReadNPZ reads the .npz archive at path; errors name the path.
func ReadNPZ(path string) ([]Array, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("npz: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("npz: %w", err)
	}
	arrays, err := DecodeNPZ(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("npz %s: %w", path, err)
	}
	return arrays, nil
}
