package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// ChecksumKey is the __metadata__ entry in which Write records checksums:
// a JSON object that maps each tensor's name to the CRC-32C (Castagnoli) of
// its bytes in the data buffer, and "__metadata__" (which no tensor can be
// named) to the CRC-32C of the rest of the header, each checksum written as
// 8 lowercase hex digits, e.g.
//
//	{"__metadata__":"1c291ca3","bias":"5d0a8e55","weight":"3bd4e7a1"}
//
// The header checksum covers, with every string preceded by its length and
// every number written as a uvarint: the metadata entries other than
// ChecksumKey in sorted key order (key, value), then the tensors in name
// order (name, dtype, rank, each dimension, begin and end offsets).
//
// Reading verifies what the entry records: its format, that it covers
// exactly the file's tensors, the header checksum (ReadHeader, Read,
// ReadFile) and every tensor's (Read, ReadFile). Files without the entry,
// such as timm's, are read unverified. The entry is not part of the
// Metadata that reading returns.
const ChecksumKey = "crc32c"

// checksumsStart begins every checksum map Write records.
const checksumsStart = `{"` + metadataKey + `":`

// castagnoli is the CRC-32C table.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// headerChecksum returns the CRC-32C of the metadata entries other than
// ChecksumKey and of the tensors' descriptions; see ChecksumKey.
func headerChecksum(md map[string]string, tensors []TensorInfo) uint32 {
	var b []byte
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	for _, k := range slices.Sorted(maps.Keys(md)) {
		if k != ChecksumKey {
			str(k)
			str(md[k])
		}
	}
	byName := slices.SortedFunc(slices.Values(tensors), func(a, b TensorInfo) int { return strings.Compare(a.Name, b.Name) })
	for _, t := range byName {
		str(t.Name)
		str(string(t.DType))
		b = binary.AppendUvarint(b, uint64(len(t.Shape)))
		for _, d := range t.Shape {
			b = binary.AppendUvarint(b, uint64(d))
		}
		b = binary.AppendUvarint(b, uint64(t.Begin))
		b = binary.AppendUvarint(b, uint64(t.End))
	}
	return crc32.Checksum(b, castagnoli)
}

// tensorChecksum returns the CRC-32C of t's bytes as Write stores them.
func tensorChecksum(t Tensor, buf *[]byte) uint32 {
	var sum uint32
	encodeTensor(t, buf, func(b []byte) error {
		sum = crc32.Update(sum, castagnoli, b)
		return nil
	})
	return sum
}

// withChecksums returns a copy of metadata with the ChecksumKey entry for
// tensors, laid out as infos, added.
func withChecksums(tensors []Tensor, infos []TensorInfo, metadata map[string]string) map[string]string {
	md := make(map[string]string, len(metadata)+1)
	maps.Copy(md, metadata)
	sums := make(map[string]uint32, len(tensors)+1)
	var buf []byte
	for _, t := range tensors {
		sums[t.Name] = tensorChecksum(t, &buf)
	}
	sums[metadataKey] = headerChecksum(metadata, infos)
	b := []byte{'{'}
	for i, name := range slices.Sorted(maps.Keys(sums)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, name)
		b = append(b, ':', '"')
		b = appendHex(b, sums[name])
		b = append(b, '"')
	}
	md[ChecksumKey] = string(append(b, '}'))
	return md
}

// appendHex appends v as 8 lowercase hex digits.
func appendHex(b []byte, v uint32) []byte {
	const digits = "0123456789abcdef"
	for shift := 28; shift >= 0; shift -= 4 {
		b = append(b, digits[v>>uint(shift)&0xf])
	}
	return b
}

// parseHex reads exactly 8 lowercase hex digits. Upper case is refused so
// that a flipped bit cannot turn a checksum into an equal one.
func parseHex(s string) (uint32, bool) {
	if len(s) != 8 {
		return 0, false
	}
	var v uint32
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | uint32(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | uint32(c-'a'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

// takeChecksums removes the ChecksumKey entry from h.Metadata, checks it
// against the header (format, coverage, the metadata's checksum) and
// records the tensors' checksums in h.Checksums.
func takeChecksums(h *Header, file string) error {
	// A checksum map under another key is one whose key was damaged (one
	// flipped bit turns "crc32c" into "brc32c"); unchecked, the file would
	// load without verification.
	for _, k := range slices.Sorted(maps.Keys(h.Metadata)) {
		if k != ChecksumKey && strings.HasPrefix(h.Metadata[k], checksumsStart) {
			return formatErr(file, "", metadataKey, "entry %q holds checksums (it starts %s) but is not named %q: the header is corrupt", k, checksumsStart, ChecksumKey)
		}
	}
	s, ok := h.Metadata[ChecksumKey]
	if !ok {
		return nil
	}
	sums, err := parseChecksums(s, file)
	if err != nil {
		return err
	}
	want, ok := sums[metadataKey]
	if !ok {
		return formatErr(file, "", metadataKey, "%q has no %q entry for the header's checksum", ChecksumKey, metadataKey)
	}
	if got := headerChecksum(h.Metadata, h.Tensors); got != want {
		return formatErr(file, "", "header", "CRC-32C of the metadata and tensor descriptions is %08x, but %q records %08x: the header is corrupt", got, ChecksumKey, want)
	}
	delete(sums, metadataKey)
	for _, t := range h.Tensors {
		if _, ok := sums[t.Name]; !ok {
			return formatErr(file, t.Name, metadataKey, "%q has no checksum for this tensor, though it records the others'", ChecksumKey)
		}
	}
	if len(sums) != len(h.Tensors) {
		have := make(map[string]bool, len(h.Tensors))
		for _, t := range h.Tensors {
			have[t.Name] = true
		}
		for _, name := range slices.Sorted(maps.Keys(sums)) {
			if !have[name] {
				return formatErr(file, "", metadataKey, "%q has a checksum for tensor %q, which the file does not hold", ChecksumKey, name)
			}
		}
	}
	delete(h.Metadata, ChecksumKey)
	h.Checksums = sums
	return nil
}

// parseChecksums decodes the ChecksumKey value strictly: one JSON object of
// distinct names to 8-hex-digit strings.
func parseChecksums(s, file string) (map[string]uint32, error) {
	bad := func(format string, args ...any) error {
		return formatErr(file, "", metadataKey, "%q: "+format, append([]any{ChecksumKey}, args...)...)
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	next := func() (json.Token, error) {
		tok, err := dec.Token()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, bad("not a JSON object of tensor names to checksums: %v", err)
		}
		return tok, nil
	}
	tok, err := next()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, bad("got %s, want a JSON object of tensor names to checksums", describe(tok))
	}
	sums := map[string]uint32{}
	for {
		tok, err := next()
		if err != nil {
			return nil, err
		}
		if d, ok := tok.(json.Delim); ok && d == '}' {
			break
		}
		name, ok := tok.(string)
		if !ok {
			return nil, bad("got %s, want a tensor name", describe(tok))
		}
		if _, dup := sums[name]; dup {
			return nil, bad("%q appears twice", name)
		}
		if tok, err = next(); err != nil {
			return nil, err
		}
		v, isString := tok.(string)
		sum, isHex := parseHex(v)
		if !isString || !isHex {
			return nil, bad("the checksum of %q is %s, want 8 lowercase hex digits", name, describe(tok))
		}
		sums[name] = sum
	}
	if rest := bytes.TrimSpace([]byte(s)[dec.InputOffset():]); len(rest) != 0 {
		return nil, bad("unexpected %s after the JSON object", strconv.Quote(string(rest[:min(len(rest), 16)])))
	}
	return sums, nil
}
