package npy

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/vit-train/vit-train/formats/safetensors"
)

// Array is a floating point array read from a .npy file, as float32.
type Array struct {
	Name  string // the .npz entry name without ".npy"; empty for a lone .npy file
	Descr string // the element type in the file: "<f2", "<f4" or "<f8"
	Shape []int  // dimensions, C order; empty for a scalar
	Data  []float32
}

// Limits on what Decode accepts.
const (
	// MaxHeaderLen bounds the header dictionary; format 2.0 exists for
	// headers over 65535 bytes (arrays of very many dimensions).
	MaxHeaderLen = 1 << 20
	// MaxArrayBytes bounds one array's data as stored in the file. Memory
	// grows only with the data actually read, so the bound is generous:
	// ImageNet-1k teacher logits (1.28M × 1000 float32) are 5.1 GB.
	MaxArrayBytes = 1 << 40
)

// magic opens every .npy file.
const magic = "\x93NUMPY"

// Decode reads one .npy array from r, which must end where the array's data
// ends. Errors give the byte offset of the fault.
func Decode(r io.Reader) (*Array, error) {
	var pre [8]byte
	if n, err := io.ReadFull(r, pre[:]); err != nil {
		return nil, fmt.Errorf("file of %d bytes is too short for the 8-byte magic and version", n)
	}
	if string(pre[:6]) != magic {
		return nil, fmt.Errorf("magic string %q at byte 0 is not %q", pre[:6], magic)
	}
	lenBytes := 4
	switch major, minor := pre[6], pre[7]; {
	case major == 1 && minor == 0:
		lenBytes = 2
	case (major == 2 || major == 3) && minor == 0:
	default:
		return nil, fmt.Errorf("format version %d.%d at byte 6 is not 1.0, 2.0 or 3.0", major, minor)
	}
	var lb [4]byte
	if _, err := io.ReadFull(r, lb[:lenBytes]); err != nil {
		return nil, fmt.Errorf("file ends inside the %d-byte header length at byte 8", lenBytes)
	}
	hlen := int(binary.LittleEndian.Uint32(lb[:]))
	start := 8 + lenBytes
	if hlen > MaxHeaderLen {
		return nil, fmt.Errorf("header length %d at byte 8 exceeds the limit of %d", hlen, MaxHeaderLen)
	}
	hbuf := make([]byte, hlen)
	if n, err := io.ReadFull(r, hbuf); err != nil {
		return nil, fmt.Errorf("header of %d bytes from byte %d is truncated after %d bytes", hlen, start, n)
	}
	h, err := parseHeader(string(hbuf), start)
	if err != nil {
		return nil, err
	}
	item, _ := itemSize(h.descr)
	dataStart := int64(start + hlen)
	n, ok := count(h.shape, int64(MaxArrayBytes)/int64(item))
	if !ok {
		return nil, fmt.Errorf("header at byte %d: field 'shape' %v of %s needs more than %d bytes", start, h.shape, h.descr, int64(MaxArrayBytes))
	}
	data, err := readData(r, n, item)
	if err != nil {
		return nil, fmt.Errorf("data from byte %d (shape %v of %s, %d bytes): %w", dataStart, h.shape, h.descr, n*int64(item), err)
	}
	var one [1]byte
	end := dataStart + n*int64(item)
	if m, err := io.ReadFull(r, one[:]); m != 0 {
		return nil, fmt.Errorf("trailing bytes at byte %d after the data of shape %v of %s", end, h.shape, h.descr)
	} else if !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("reading past the data at byte %d: %w", end, err)
	}
	if h.fortran {
		data = fortranToC(data, h.shape)
	}
	return &Array{Descr: h.descr, Shape: h.shape, Data: data}, nil
}

// fortranToC reorders the elements of an array stored in Fortran (column-
// major) order into C (row-major) order.
func fortranToC(data []float32, shape []int) []float32 {
	if len(shape) < 2 || len(data) == 0 {
		return data
	}
	// stride[k] is the Fortran offset step along dimension k.
	stride := make([]int, len(shape))
	s := 1
	for k, d := range shape {
		stride[k] = s
		s *= d
	}
	out := make([]float32, len(data))
	idx := make([]int, len(shape))
	off := 0
	last := len(shape) - 1
	for i := range out {
		out[i] = data[off]
		// Advance the C-order multi-index, the last dimension fastest.
		for k := last; k >= 0; k-- {
			idx[k]++
			off += stride[k]
			if idx[k] < shape[k] {
				break
			}
			off -= idx[k] * stride[k]
			idx[k] = 0
		}
	}
	return out
}

// ReadFile reads the .npy file at path; errors name the path.
func ReadFile(path string) (*Array, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	defer f.Close()
	a, err := Decode(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("npy %s: %w", path, err)
	}
	return a, nil
}

// count multiplies out shape; ok is false when the product exceeds limit.
func count(shape []int, limit int64) (n int64, ok bool) {
	n = 1
	for _, d := range shape {
		if d == 0 {
			return 0, true
		}
	}
	for _, d := range shape {
		if int64(d) > limit/n {
			return 0, false
		}
		n *= int64(d)
	}
	return n, true
}

// readChunk is the number of bytes decoded at a time; the result grows
// chunk by chunk, so a header announcing more data than the input holds
// costs no more memory than the input.
const readChunk = 1 << 16

// readData decodes n little-endian floats of item bytes each.
func readData(r io.Reader, n int64, item int) ([]float32, error) {
	out := make([]float32, 0, min(n, readChunk))
	buf := make([]byte, readChunk)
	for int64(len(out)) < n {
		m := int(min(int64(readChunk/item), n-int64(len(out))))
		chunk := buf[:m*item]
		if got, err := io.ReadFull(r, chunk); err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
				return nil, fmt.Errorf("truncated after %d bytes", int64(len(out))*int64(item)+int64(got))
			}
			return nil, err
		}
		le := binary.LittleEndian
		switch item {
		case 2:
			for j := range m {
				out = append(out, safetensors.Float16ToFloat32(le.Uint16(chunk[2*j:])))
			}
		case 4:
			for j := range m {
				out = append(out, math.Float32frombits(le.Uint32(chunk[4*j:])))
			}
		case 8:
			for j := range m {
				out = append(out, float32(math.Float64frombits(le.Uint64(chunk[8*j:]))))
			}
		}
	}
	return out, nil
}
