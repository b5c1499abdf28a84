package safetensors

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"unsafe"
)

// Tensor is a named float32 tensor of shape Shape (row-major, len(Data)
// equal to the product of Shape; a scalar has an empty Shape). DType is the
// element type in the file: the one it was read from, or the encoding to
// write (empty means F32).
type Tensor struct {
	Name  string
	DType DType
	Shape []int
	Data  []float32
}

// File is the content of a safetensors file.
type File struct {
	Tensors  []Tensor // in data buffer order (sorted by name for files this package writes)
	Metadata map[string]string
}

// Get returns the tensor with the given name.
func (f *File) Get(name string) (Tensor, bool) {
	for _, t := range f.Tensors {
		if t.Name == name {
			return t, true
		}
	}
	return Tensor{}, false
}

// nativeLittleEndian reports whether float32 slices can be read and
// written as little-endian bytes directly.
var nativeLittleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// Read reads the size-byte safetensors file r, validating the header and
// converting all tensors to float32. Tensors of dtypes other than F32, F16,
// BF16 and F64 are an error. When the file carries checksums (see
// ChecksumKey), every tensor's bytes are verified: a mismatch is a
// *FormatError naming the tensor.
func Read(r io.ReaderAt, size int64) (*File, error) { return read(r, size, "") }

// ReadFile reads the safetensors file at path; errors name the path.
func ReadFile(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	return read(f, st.Size(), path)
}

func read(r io.ReaderAt, size int64, file string) (*File, error) {
	h, err := readHeader(r, size, file)
	if err != nil {
		return nil, err
	}
	out := &File{Tensors: make([]Tensor, len(h.Tensors)), Metadata: h.Metadata}
	var scratch []byte
	for i, info := range h.Tensors {
		if !info.DType.Float() {
			return nil, formatErr(file, info.Name, "dtype", "%s cannot be converted to float32", info.DType)
		}
		t := Tensor{Name: info.Name, DType: info.DType, Shape: info.Shape, Data: make([]float32, info.NumElements())}
		nbytes := info.End - info.Begin
		var raw []byte
		if info.DType == F32 && nativeLittleEndian {
			raw = float32Bytes(t.Data)
		} else {
			if int64(cap(scratch)) < nbytes {
				scratch = make([]byte, nbytes)
			}
			raw = scratch[:nbytes]
		}
		if err := readFull(r, raw, h.DataStart+info.Begin); err != nil {
			return nil, ioErr(file, fmt.Sprintf("reading tensor %q", info.Name), err)
		}
		if want, ok := h.Checksums[info.Name]; ok {
			if got := crc32.Checksum(raw, castagnoli); got != want {
				return nil, formatErr(file, info.Name, "data", "CRC-32C of bytes [%d, %d) of the data buffer is %08x, but %q records %08x: the tensor's data is corrupt",
					info.Begin, info.End, got, ChecksumKey, want)
			}
		}
		if !(info.DType == F32 && nativeLittleEndian) {
			decode(t.Data, raw, info.DType)
		}
		out.Tensors[i] = t
	}
	return out, nil
}

// readFull fills buf from r at off; a short read is io.ErrUnexpectedEOF.
func readFull(r io.ReaderAt, buf []byte, off int64) error {
	n, err := r.ReadAt(buf, off)
	if n == len(buf) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// float32Bytes views x as its bytes in memory order.
func float32Bytes(x []float32) []byte {
	if len(x) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&x[0])), 4*len(x))
}

// decode converts little-endian elements of dtype dt in src to dst.
func decode(dst []float32, src []byte, dt DType) {
	le := binary.LittleEndian
	switch dt {
	case F32:
		for i := range dst {
			dst[i] = math.Float32frombits(le.Uint32(src[4*i:]))
		}
	case F16:
		for i := range dst {
			dst[i] = Float16ToFloat32(le.Uint16(src[2*i:]))
		}
	case BF16:
		for i := range dst {
			dst[i] = BFloat16ToFloat32(le.Uint16(src[2*i:]))
		}
	case F64:
		for i := range dst {
			dst[i] = float32(math.Float64frombits(le.Uint64(src[8*i:])))
		}
	}
}
