package npy

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/vit-train/vit-train/formats/atomicfile"
)

// align is the multiple NumPy pads the preamble to, so data starts aligned.
const align = 64

// WriteFile writes data, row-major with the given shape (such as (N, C)), as
// a float32 '<f4' .npy file byte for byte as NumPy writes it: format 1.0
// (2.0 when the header needs more than 65535 bytes), header padded to a
// multiple of 64 bytes. The file is replaced atomically (see
// atomicfile.Write): readers never see a partial file, and a failed write
// leaves the previous file as it was.
func WriteFile(path string, data []float32, shape []int) error {
	n, ok := count(shape, math.MaxInt64)
	if slices.ContainsFunc(shape, func(d int) bool { return d < 0 }) {
		return fmt.Errorf("npy %s: shape %v has a negative dimension", path, shape)
	}
	if !ok {
		return fmt.Errorf("npy %s: shape %v holds more elements than an array can, data has %d", path, shape, len(data))
	}
	if n != int64(len(data)) {
		return fmt.Errorf("npy %s: shape %v holds %d elements, data has %d", path, shape, n, len(data))
	}
	if err := atomicfile.Write(path, func(w io.Writer) error { return Encode(w, data, shape) }); err != nil {
		return fmt.Errorf("npy: %w", err) // names path
	}
	return nil
}

// Encode writes the .npy bytes of data with the given shape, whose product
// the caller has checked.
func Encode(w io.Writer, data []float32, shape []int) error {
	if _, err := w.Write(preamble(shape)); err != nil {
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

// preamble returns magic, version, header length and the padded header.
func preamble(shape []int) []byte {
	header := formatHeader(shape)
	major, lenBytes := byte(1), 2
	// The header ends in '\n' and the preamble is padded to align.
	total := func(lenBytes int) int {
		raw := 8 + lenBytes + len(header) + 1
		return (raw + align - 1) / align * align
	}
	if total(2)-10 > math.MaxUint16 {
		major, lenBytes = 2, 4
	}
	size := total(lenBytes)
	out := make([]byte, 0, size)
	out = append(out, magic...)
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

// formatHeader writes the dictionary as NumPy does:
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
func formatHeader(shape []int) string {
	dims := make([]string, len(shape))
	for i, d := range shape {
		dims[i] = strconv.Itoa(d)
	}
	tuple := "(" + strings.Join(dims, ", ") + ")"
	if len(shape) == 1 {
		tuple = "(" + dims[0] + ",)"
	}
	return "{'descr': '<f4', 'fortran_order': False, 'shape': " + tuple + ", }"
}
