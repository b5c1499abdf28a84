package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"unicode/utf8"
)

// MaxHeaderSize bounds the JSON header, as the reference implementation
// does (100 MB).
const MaxHeaderSize = 100_000_000

// metadataKey is the header entry holding the string-to-string metadata.
const metadataKey = "__metadata__"

// TensorInfo describes one tensor in a file's header.
type TensorInfo struct {
	Name  string
	DType DType
	Shape []int
	// Begin and End delimit the tensor's bytes in the data buffer.
	Begin, End int64
}

// NumElements returns the product of the shape (1 for a scalar).
func (t TensorInfo) NumElements() int {
	n := 1
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Header is a file's parsed and validated header.
type Header struct {
	Tensors  []TensorInfo // in data buffer order
	Metadata map[string]string
	// Checksums are the CRC-32C checksums of the tensors' bytes, by name,
	// from the ChecksumKey metadata entry (which Metadata then omits); nil
	// for a file without one.
	Checksums map[string]uint32
	DataStart int64 // file offset of the data buffer: 8 + the header length
}

// ReadHeader reads and validates the header of the size-byte file r
// without reading tensor data. When the file carries checksums (see
// ChecksumKey), their format and coverage and the metadata's checksum are
// verified; the tensors' are left to Read.
func ReadHeader(r io.ReaderAt, size int64) (*Header, error) { return readHeader(r, size, "") }

func readHeader(r io.ReaderAt, size int64, file string) (*Header, error) {
	if size < 8 {
		return nil, formatErr(file, "", "header length", "file is %d bytes, shorter than the 8-byte header length", size)
	}
	var lenBuf [8]byte
	if err := readFull(r, lenBuf[:], 0); err != nil {
		return nil, ioErr(file, "reading the header length", err)
	}
	n := binary.LittleEndian.Uint64(lenBuf[:])
	if n > MaxHeaderSize {
		return nil, formatErr(file, "", "", "not a safetensors file: its header length (its first 8 bytes, little-endian) is %d bytes, which exceeds the limit of %d", n, MaxHeaderSize)
	}
	if n > uint64(size-8) {
		if !startsJSON(r, size) {
			return nil, formatErr(file, "", "", "not a safetensors file: its header length (its first 8 bytes, little-endian) is %d bytes, but only %d bytes follow it, and they do not start with '{'", n, size-8)
		}
		return nil, formatErr(file, "", "header length", "%d bytes, but only %d bytes follow it (file truncated?)", n, size-8)
	}
	js := make([]byte, n)
	if err := readFull(r, js, 8); err != nil {
		return nil, ioErr(file, "reading the header", err)
	}
	dataStart := 8 + int64(n)
	h, err := parseHeader(js, size-dataStart, file)
	if err != nil {
		return nil, err
	}
	h.DataStart = dataStart
	return h, nil
}

// startsJSON reports whether the header of the size-byte file r begins
// as a safetensors header does, with '{'.
func startsJSON(r io.ReaderAt, size int64) bool {
	var b [1]byte
	return size > 8 && readFull(r, b[:], 8) == nil && b[0] == '{'
}

// ioErr wraps a read or write failure with the file and what was being done.
func ioErr(file, doing string, err error) error {
	if file == "" {
		return fmt.Errorf("safetensors: %s: %w", doing, err)
	}
	return fmt.Errorf("safetensors: %s: %s: %w", file, doing, err)
}

// parseHeader decodes the JSON header and checks it against a data buffer
// of dataLen bytes.
func parseHeader(js []byte, dataLen int64, file string) (*Header, error) {
	if !utf8.Valid(js) {
		return nil, formatErr(file, "", "header", "not valid UTF-8")
	}
	if len(js) == 0 || js[0] != '{' {
		return nil, formatErr(file, "", "header", "does not start with '{'")
	}
	p := headerParser{dec: json.NewDecoder(bytes.NewReader(js)), file: file}
	p.dec.UseNumber()
	h, err := p.parse()
	if err != nil {
		return nil, err
	}
	if rest := bytes.TrimLeft(js[p.dec.InputOffset():], " \t\r\n"); len(rest) != 0 {
		return nil, formatErr(file, "", "header", "unexpected data after the JSON object at byte %d", len(js)-len(rest))
	}
	if err := validateLayout(h.Tensors, dataLen, file); err != nil {
		return nil, err
	}
	if err := takeChecksums(h, file); err != nil {
		return nil, err
	}
	return h, nil
}

// headerParser reads the header JSON token by token, so that duplicate
// keys, unknown fields and wrong types are all reported.
type headerParser struct {
	dec  *json.Decoder
	file string
}

func (p *headerParser) token(tensor, field string) (json.Token, error) {
	tok, err := p.dec.Token()
	if err == nil {
		return tok, nil
	}
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return nil, formatErr(p.file, tensor, field, "invalid JSON near byte %d: %v", p.dec.InputOffset(), err)
}

// delim consumes the delimiter want.
func (p *headerParser) delim(tensor, field string, want json.Delim) error {
	tok, err := p.token(tensor, field)
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return formatErr(p.file, tensor, field, "got %s, want %q", describe(tok), string(want))
	}
	return nil
}

// describe renders a JSON token for an error message.
func describe(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		return strconv.Quote(string(v))
	case string:
		return "string " + strconv.Quote(v)
	case json.Number:
		return "number " + v.String()
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T %v", tok, tok)
}

// key reads an object key, or reports ok=false at the closing brace.
func (p *headerParser) key(tensor, field string) (key string, ok bool, err error) {
	tok, err := p.token(tensor, field)
	if err != nil {
		return "", false, err
	}
	switch v := tok.(type) {
	case string:
		return v, true, nil
	case json.Delim:
		if v == '}' {
			return "", false, nil
		}
	}
	return "", false, formatErr(p.file, tensor, field, "got %s, want an object key", describe(tok))
}

func (p *headerParser) parse() (*Header, error) {
	if err := p.delim("", "header", '{'); err != nil {
		return nil, err
	}
	h := &Header{}
	seen := map[string]bool{}
	for {
		name, ok, err := p.key("", "header")
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if seen[name] {
			return nil, formatErr(p.file, name, "header", "name appears twice")
		}
		seen[name] = true
		if name == metadataKey {
			if h.Metadata, err = p.metadata(); err != nil {
				return nil, err
			}
			continue
		}
		if name == "" {
			return nil, formatErr(p.file, "", "header", "empty tensor name")
		}
		info, err := p.tensorInfo(name)
		if err != nil {
			return nil, err
		}
		h.Tensors = append(h.Tensors, info)
	}
	return h, nil
}

func (p *headerParser) metadata() (map[string]string, error) {
	if err := p.delim("", metadataKey, '{'); err != nil {
		return nil, err
	}
	md := map[string]string{}
	for {
		k, ok, err := p.key("", metadataKey)
		if err != nil || !ok {
			return md, err
		}
		if _, dup := md[k]; dup {
			return nil, formatErr(p.file, "", metadataKey, "key %q appears twice", k)
		}
		tok, err := p.token("", metadataKey)
		if err != nil {
			return nil, err
		}
		v, isString := tok.(string)
		if !isString {
			return nil, formatErr(p.file, "", metadataKey, "value of %q is %s, want a string", k, describe(tok))
		}
		md[k] = v
	}
}

func (p *headerParser) tensorInfo(name string) (TensorInfo, error) {
	info := TensorInfo{Name: name}
	if err := p.delim(name, "header", '{'); err != nil {
		return info, err
	}
	var haveDType, haveShape, haveOffsets bool
	for {
		field, ok, err := p.key(name, "header")
		if err != nil {
			return info, err
		}
		if !ok {
			break
		}
		switch field {
		case "dtype":
			if haveDType {
				return info, formatErr(p.file, name, field, "appears twice")
			}
			haveDType = true
			tok, err := p.token(name, field)
			if err != nil {
				return info, err
			}
			s, isString := tok.(string)
			if !isString {
				return info, formatErr(p.file, name, field, "got %s, want a string", describe(tok))
			}
			info.DType = DType(s)
			if info.DType.Size() == 0 {
				return info, formatErr(p.file, name, field, "unknown dtype %q", s)
			}
		case "shape":
			if haveShape {
				return info, formatErr(p.file, name, field, "appears twice")
			}
			haveShape = true
			dims, err := p.uints(name, field)
			if err != nil {
				return info, err
			}
			info.Shape = make([]int, len(dims))
			for i, d := range dims {
				if d > math.MaxInt {
					return info, formatErr(p.file, name, field, "dimension %d is %d, too large", i, d)
				}
				info.Shape[i] = int(d)
			}
		case "data_offsets":
			if haveOffsets {
				return info, formatErr(p.file, name, field, "appears twice")
			}
			haveOffsets = true
			offs, err := p.uints(name, field)
			if err != nil {
				return info, err
			}
			if len(offs) != 2 {
				return info, formatErr(p.file, name, field, "has %d numbers %v, want [begin, end]", len(offs), offs)
			}
			if offs[0] > offs[1] || offs[1] > math.MaxInt64 {
				return info, formatErr(p.file, name, field, "[%d, %d] is not a valid byte range", offs[0], offs[1])
			}
			info.Begin, info.End = int64(offs[0]), int64(offs[1])
		default:
			return info, formatErr(p.file, name, "header", "unknown field %q", field)
		}
	}
	for i, have := range []bool{haveDType, haveShape, haveOffsets} {
		if !have {
			return info, formatErr(p.file, name, []string{"dtype", "shape", "data_offsets"}[i], "missing")
		}
	}
	return info, nil
}

// uints reads a JSON array of non-negative integers.
func (p *headerParser) uints(tensor, field string) ([]uint64, error) {
	if err := p.delim(tensor, field, '['); err != nil {
		return nil, err
	}
	var out []uint64
	for {
		tok, err := p.token(tensor, field)
		if err != nil {
			return nil, err
		}
		if d, ok := tok.(json.Delim); ok && d == ']' {
			return out, nil
		}
		num, isNum := tok.(json.Number)
		if !isNum {
			return nil, formatErr(p.file, tensor, field, "element %d is %s, want a non-negative integer", len(out), describe(tok))
		}
		v, err := strconv.ParseUint(num.String(), 10, 64)
		if err != nil {
			return nil, formatErr(p.file, tensor, field, "element %d is %s, want a non-negative integer", len(out), num)
		}
		out = append(out, v)
	}
}

// validateLayout checks that each tensor's byte range matches its dtype and
// shape and that the ranges tile the data buffer [0, dataLen) exactly; it
// sorts tensors by position.
func validateLayout(tensors []TensorInfo, dataLen int64, file string) error {
	for _, t := range tensors {
		n, ok := byteSize(t.Shape, t.DType.Size())
		if !ok {
			return formatErr(file, t.Name, "shape", "%v of %s overflows the addressable size", t.Shape, t.DType)
		}
		if t.End > dataLen {
			return formatErr(file, t.Name, "data_offsets", "[%d, %d] ends past the %d-byte data buffer (file truncated?)", t.Begin, t.End, dataLen)
		}
		if t.End-t.Begin != n {
			return formatErr(file, t.Name, "data_offsets", "[%d, %d] spans %d bytes, but shape %v of %s needs %d", t.Begin, t.End, t.End-t.Begin, t.Shape, t.DType, n)
		}
	}
	slices.SortStableFunc(tensors, func(a, b TensorInfo) int {
		if a.Begin != b.Begin {
			return compare(a.Begin, b.Begin)
		}
		return compare(a.End, b.End)
	})
	var pos int64
	prev := "the start of the data buffer"
	for _, t := range tensors {
		switch {
		case t.Begin < pos:
			return formatErr(file, t.Name, "data_offsets", "[%d, %d] overlaps %s, which ends at %d", t.Begin, t.End, prev, pos)
		case t.Begin > pos:
			return formatErr(file, t.Name, "data_offsets", "[%d, %d] leaves a hole of %d bytes after %s", t.Begin, t.End, t.Begin-pos, prev)
		}
		pos, prev = t.End, fmt.Sprintf("tensor %q", t.Name)
	}
	if pos != dataLen {
		return formatErr(file, "", "data_offsets", "tensors cover %d bytes, but the data buffer has %d (trailing bytes after %s)", pos, dataLen, prev)
	}
	return nil
}

func compare(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// byteSize returns the product of shape times elemSize, ok=false on
// overflow of int64.
func byteSize(shape []int, elemSize int) (int64, bool) {
	if slices.Contains(shape, 0) {
		return 0, true
	}
	n := uint64(elemSize)
	for _, d := range shape {
		hi, lo := bits.Mul64(n, uint64(d))
		if hi != 0 || lo > math.MaxInt64 {
			return 0, false
		}
		n = lo
	}
	return int64(n), true
}
