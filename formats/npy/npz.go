package npy

import (
	"archive/zip"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
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
	if err := checkDisjoint(zr.File, size); err != nil {
		return nil, err
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

// checkDisjoint rejects entries whose compressed data overlap or run past
// the archive. Entries sharing one deflated block (a "zip bomb" of
// overlapping files) would expand a small archive into far more arrays
// than it holds; NumPy never writes them.
func checkDisjoint(files []*zip.File, size int64) error {
	type span struct {
		name       string
		begin, end int64
	}
	spans := make([]span, 0, len(files))
	for _, f := range files {
		off, err := f.DataOffset()
		if err != nil {
			return fmt.Errorf("entry %q: %w", f.Name, err)
		}
		if f.CompressedSize64 > uint64(size) || off > size-int64(f.CompressedSize64) {
			return fmt.Errorf("entry %q: %d compressed bytes at offset %d run past the %d-byte archive", f.Name, f.CompressedSize64, off, size)
		}
		spans = append(spans, span{f.Name, off, off + int64(f.CompressedSize64)})
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.begin, b.begin) })
	for i := 1; i < len(spans); i++ {
		if prev, s := spans[i-1], spans[i]; s.begin < prev.end {
			return fmt.Errorf("entry %q (bytes %d to %d) overlaps entry %q (bytes %d to %d): entries must not share data", s.name, s.begin, s.end, prev.name, prev.begin, prev.end)
		}
	}
	return nil
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
