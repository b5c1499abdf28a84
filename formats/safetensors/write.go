package safetensors

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// encodeChunk is the number of elements converted per write for dtypes
// other than little-endian F32.
const encodeChunk = 1 << 14

// Write writes tensors and metadata (may be nil) as a safetensors file.
// Each tensor is stored as its DType (F32 when empty; F16, BF16 and F64
// are also accepted, F16 and BF16 rounding to nearest even). As in the
// reference implementation, tensors are laid out by dtype width, widest
// first, then by name, and the header is padded with spaces to a multiple
// of 8 bytes. The metadata gains a ChecksumKey entry holding the CRC-32C of
// every tensor's bytes and of the metadata, which readers verify; metadata
// may not set that key itself. Everything is validated before the first
// byte is written.
func Write(w io.Writer, tensors []Tensor, metadata map[string]string) error {
	return write(w, tensors, metadata, "")
}

func write(w io.Writer, tensors []Tensor, metadata map[string]string, file string) error {
	order, err := writeOrder(tensors, metadata, file)
	if err != nil {
		return err
	}
	header := encodeHeader(tensors, order, withChecksums(tensors, layout(tensors, order), metadata))
	var lenBuf [8]byte
	binary.LittleEndian.PutUint64(lenBuf[:], uint64(len(header)))
	if _, err := w.Write(lenBuf[:]); err != nil {
		return ioErr(file, "writing the header length", err)
	}
	if _, err := w.Write(header); err != nil {
		return ioErr(file, "writing the header", err)
	}
	var buf []byte
	for _, i := range order {
		t := tensors[i]
		if err := writeData(w, t, &buf); err != nil {
			return ioErr(file, fmt.Sprintf("writing tensor %q", t.Name), err)
		}
	}
	return nil
}

// dtypeOf returns the dtype a tensor is written as.
func dtypeOf(t Tensor) DType {
	if t.DType == "" {
		return F32
	}
	return t.DType
}

// writeOrder validates the tensors and metadata and returns the tensor
// indices in file order.
func writeOrder(tensors []Tensor, metadata map[string]string, file string) ([]int, error) {
	for k, v := range metadata {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return nil, formatErr(file, "", metadataKey, "key %q or its value is not valid UTF-8", k)
		}
	}
	if _, ok := metadata[ChecksumKey]; ok {
		return nil, formatErr(file, "", metadataKey, "key %q is reserved for the checksums that Write records", ChecksumKey)
	}
	for k, v := range metadata {
		if strings.HasPrefix(v, checksumsStart) {
			return nil, formatErr(file, "", metadataKey, "the value of %q starts %s, which marks the checksums that Write records", k, checksumsStart)
		}
	}
	seen := make(map[string]bool, len(tensors))
	for _, t := range tensors {
		switch {
		case t.Name == "" || t.Name == metadataKey || !utf8.ValidString(t.Name):
			return nil, formatErr(file, t.Name, "name", "%q is empty, reserved or not valid UTF-8", t.Name)
		case seen[t.Name]:
			return nil, formatErr(file, t.Name, "name", "appears twice")
		}
		seen[t.Name] = true
		if !dtypeOf(t).Float() {
			return nil, formatErr(file, t.Name, "dtype", "cannot write float32 data as %q (want F32, F16, BF16 or F64)", t.DType)
		}
		if slices.ContainsFunc(t.Shape, func(d int) bool { return d < 0 }) {
			return nil, formatErr(file, t.Name, "shape", "%v has a negative dimension", t.Shape)
		}
		n, ok := byteSize(t.Shape, 1)
		if !ok || n != int64(len(t.Data)) {
			return nil, formatErr(file, t.Name, "shape", "%v does not match the %d data elements", t.Shape, len(t.Data))
		}
	}
	order := make([]int, len(tensors))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		ta, tb := tensors[a], tensors[b]
		return cmp.Or(cmp.Compare(dtypeOf(tb).writeRank(), dtypeOf(ta).writeRank()), cmp.Compare(ta.Name, tb.Name))
	})
	return order, nil
}

// layout returns the header entries of tensors written in order.
func layout(tensors []Tensor, order []int) []TensorInfo {
	infos := make([]TensorInfo, 0, len(tensors))
	var offset int64
	for _, i := range order {
		t := tensors[i]
		dt := dtypeOf(t)
		end := offset + int64(len(t.Data)*dt.Size())
		infos = append(infos, TensorInfo{Name: t.Name, DType: dt, Shape: t.Shape, Begin: offset, End: end})
		offset = end
	}
	return infos
}

// encodeHeader renders the header JSON, compact as serde_json writes it,
// metadata first with sorted keys, padded with spaces to a multiple of 8.
func encodeHeader(tensors []Tensor, order []int, metadata map[string]string) []byte {
	b := []byte{'{'}
	if len(metadata) > 0 {
		b = appendJSONString(b, metadataKey)
		b = append(b, ":{"...)
		for i, k := range slices.Sorted(maps.Keys(metadata)) {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			b = appendJSONString(b, metadata[k])
		}
		b = append(b, '}')
	}
	var offset int64
	for i, ti := range order {
		t := tensors[ti]
		if i > 0 || len(metadata) > 0 {
			b = append(b, ',')
		}
		dt := dtypeOf(t)
		end := offset + int64(len(t.Data)*dt.Size())
		b = appendJSONString(b, t.Name)
		b = append(b, `:{"dtype":`...)
		b = appendJSONString(b, string(dt))
		b = append(b, `,"shape":[`...)
		for j, d := range t.Shape {
			if j > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(d), 10)
		}
		b = append(b, `],"data_offsets":[`...)
		b = strconv.AppendInt(b, offset, 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, end, 10)
		b = append(b, "]}"...)
		offset = end
	}
	b = append(b, '}')
	for len(b)%8 != 0 {
		b = append(b, ' ')
	}
	return b
}

// appendJSONString appends s as a JSON string, escaping like serde_json:
// quote, backslash and control characters only.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c == '\b':
			b = append(b, '\\', 'b')
		case c == '\f':
			b = append(b, '\\', 'f')
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// writeData writes t's elements in its dtype, little-endian; buf is a
// reusable conversion buffer.
func writeData(w io.Writer, t Tensor, buf *[]byte) error {
	return encodeTensor(t, buf, func(b []byte) error {
		_, err := w.Write(b)
		return err
	})
}

// encodeTensor passes t's bytes as stored (its dtype, little-endian) to
// emit, in chunks; buf is a reusable conversion buffer.
func encodeTensor(t Tensor, buf *[]byte, emit func([]byte) error) error {
	dt := dtypeOf(t)
	if dt == F32 && nativeLittleEndian {
		return emit(float32Bytes(t.Data))
	}
	size := dt.Size()
	if len(*buf) < encodeChunk*8 {
		*buf = make([]byte, encodeChunk*8)
	}
	le := binary.LittleEndian
	for lo := 0; lo < len(t.Data); lo += encodeChunk {
		chunk := t.Data[lo:min(lo+encodeChunk, len(t.Data))]
		out := (*buf)[:len(chunk)*size]
		for i, v := range chunk {
			switch dt {
			case F32:
				le.PutUint32(out[4*i:], math.Float32bits(v))
			case F16:
				le.PutUint16(out[2*i:], Float32ToFloat16(v))
			case BF16:
				le.PutUint16(out[2*i:], Float32ToBFloat16(v))
			case F64:
				le.PutUint64(out[8*i:], math.Float64bits(float64(v)))
			}
		}
		if err := emit(out); err != nil {
			return err
		}
	}
	return nil
}
