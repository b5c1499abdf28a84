// Package distill holds what DeiT distillation needs besides the losses:
// the teacher's logits, stored as NumPy .npy arrays (N, C).
package distill

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
)

// npyMagic opens every .npy file.
const npyMagic = "\x93NUMPY"

// npyAlign is the multiple NumPy pads the preamble and header to, so that
// the data starts aligned.
const npyAlign = 64

// ReadNPY reads a little-endian float32 ('<f4') or float64 ('<f8', narrowed
// to float32) C-order array from a .npy file of format version 1.0 or 2.0.
// It returns the elements in row-major order and the shape, e.g. (N, C)
// teacher logits; callers check the rank they need.
//
// The header is parsed strictly: errors name the file, the field and the
// value at fault and the byte offset, for a bad magic string or version, a
// header longer than the file, an unknown dtype or field, Fortran order, or
// data that does not match the shape (truncated or with trailing bytes).
func ReadNPY(path string) (data []float32, shape []int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	data, shape, err = decodeNPY(bufio.NewReaderSize(f, 1<<20), info.Size())
	if err != nil {
		return nil, nil, fmt.Errorf("npy %s: %w", path, err)
	}
	return data, shape, nil
}

// decodeNPY reads a .npy stream of size bytes.
func decodeNPY(r io.Reader, size int64) ([]float32, []int, error) {
	var pre [8]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		return nil, nil, fmt.Errorf("file of %d bytes is too short for the 8-byte preamble", size)
	}
	if string(pre[:6]) != npyMagic {
		return nil, nil, fmt.Errorf("magic string %q at byte 0 is not %q", pre[:6], npyMagic)
	}
	var lenBytes int
	switch major, minor := pre[6], pre[7]; {
	case major == 1 && minor == 0:
		lenBytes = 2
	case major == 2 && minor == 0:
		lenBytes = 4
	default:
		return nil, nil, fmt.Errorf("format version %d.%d at byte 6 is not 1.0 or 2.0", major, minor)
	}
	var lb [4]byte
	if _, err := io.ReadFull(r, lb[:lenBytes]); err != nil {
		return nil, nil, fmt.Errorf("file of %d bytes ends inside the header length at byte 8", size)
	}
	hlen := int64(binary.LittleEndian.Uint32(lb[:]))
	start := int64(8 + lenBytes)
	if start+hlen > size {
		return nil, nil, fmt.Errorf("header length %d at byte 8 runs past the end of the %d-byte file", hlen, size)
	}
	hbuf := make([]byte, hlen)
	if _, err := io.ReadFull(r, hbuf); err != nil {
		return nil, nil, fmt.Errorf("reading the %d-byte header: %w", hlen, err)
	}
	h, err := parseHeader(string(hbuf), int(start))
	if err != nil {
		return nil, nil, err
	}
	item, _ := itemSize(h.descr)
	dataStart := start + hlen
	n, err := elementCount(h.shape, math.MaxInt64/int64(item))
	if err != nil {
		return nil, nil, err
	}
	if want := dataStart + n*int64(item); want != size {
		what := "truncated"
		if want < size {
			what = "has trailing bytes"
		}
		return nil, nil, fmt.Errorf("data from byte %d is %s: shape %v of %s needs %d bytes, the file has %d",
			dataStart, what, h.shape, h.descr, n*int64(item), size-dataStart)
	}
	data, err := readFloats(r, int(n), item)
	if err != nil {
		return nil, nil, fmt.Errorf("reading data from byte %d: %w", dataStart, err)
	}
	return data, h.shape, nil
}

// elementCount multiplies out shape, failing when the product exceeds limit
// instead of overflowing.
func elementCount(shape []int, limit int64) (int64, error) {
	n := int64(1)
	tooBig := false
	for _, d := range shape {
		switch {
		case d == 0:
			n = 0
		case n > limit/int64(d):
			tooBig = true
		default:
			n *= int64(d)
		}
	}
	if tooBig && n != 0 {
		return 0, fmt.Errorf("field 'shape': %v holds more than %d elements", shape, limit)
	}
	return n, nil
}

// readFloats decodes n little-endian floats of item bytes each.
func readFloats(r io.Reader, n, item int) ([]float32, error) {
	out := make([]float32, n)
	buf := make([]byte, 1<<16)
	per := len(buf) / item
	for i := 0; i < n; i += per {
		m := min(per, n-i)
		chunk := buf[:m*item]
		if _, err := io.ReadFull(r, chunk); err != nil {
			return nil, err
		}
		if item == 4 {
			for j := range m {
				out[i+j] = math.Float32frombits(binary.LittleEndian.Uint32(chunk[4*j:]))
			}
		} else {
			for j := range m {
				out[i+j] = float32(math.Float64frombits(binary.LittleEndian.Uint64(chunk[8*j:])))
			}
		}
	}
	return out, nil
}

// WriteNPY writes data, row-major with the given shape (such as (N, C)),
// as a float32 '<f4' .npy file: format 1.0 (2.0 when the header needs more
// than 65535 bytes), header padded to a multiple of 64 bytes as NumPy does.
// The file is written to a temporary name in the same directory, synced and
// renamed over path, so readers never see a partial file.
func WriteNPY(path string, data []float32, shape []int) error {
	if err := writeNPY(path, data, shape); err != nil {
		return fmt.Errorf("npy %s: %w", path, err)
	}
	return nil
}

func writeNPY(path string, data []float32, shape []int) (err error) {
	n := 1
	for _, d := range shape {
		if d < 0 {
			return fmt.Errorf("shape %v has a negative dimension", shape)
		}
		n *= d
	}
	if n != len(data) {
		return fmt.Errorf("shape %v holds %d elements, data has %d", shape, n, len(data))
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	w := bufio.NewWriterSize(f, 1<<20)
	if err = encodeNPY(w, data, shape); err != nil {
		return err
	}
	if err = w.Flush(); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// encodeNPY writes the .npy bytes of data with the given shape, whose
// product the caller has checked.
func encodeNPY(w io.Writer, data []float32, shape []int) error {
	if _, err := w.Write(npyPreamble(shape)); err != nil {
		return err
	}
	buf := make([]byte, 0, 1<<16)
	for i, v := range data {
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
		if len(buf) == cap(buf) || i == len(data)-1 {
			if _, err := w.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	return nil
}

// npyPreamble returns magic, version, header length and the padded header.
func npyPreamble(shape []int) []byte {
	header := formatHeader(shape)
	major, lenBytes := byte(1), 2
	// The header ends in '\n' and the preamble is padded to npyAlign.
	total := func(lenBytes int) int {
		raw := 8 + lenBytes + len(header) + 1
		return (raw + npyAlign - 1) / npyAlign * npyAlign
	}
	if total(2)-10 > math.MaxUint16 {
		major, lenBytes = 2, 4
	}
	size := total(lenBytes)
	out := make([]byte, 0, size)
	out = append(out, npyMagic...)
	out = append(out, major, 0)
	hlen := size - 8 - lenBytes
	if lenBytes == 2 {
		out = binary.LittleEndian.AppendUint16(out, uint16(hlen))
	} else {
		out = binary.LittleEndian.AppendUint32(out, uint32(hlen))
	}
	out = append(out, header...)
	for len(out) < size-1 {
		out = append(out, ' ')
	}
	return append(out, '\n')
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}
