package imageshard

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// Reader reads a file's items by index. It is safe for concurrent use.
type Reader struct {
	ra      io.ReaderAt
	closer  io.Closer
	name    string
	meta    Meta
	records []Record
	mapped  []byte // the whole file, read-only, where Open could map it
}

// Open opens the file at path and checks its header, trailer, index and
// meta (see NewReader). The Reader keeps the file open until Close.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("imageshard: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("imageshard: %w", err)
	}
	r, err := NewReader(f, st.Size(), path)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.closer = f
	r.mapped = mapFile(f, st.Size())
	return r, nil
}

// NewReader reads the index of the size bytes of ra, checks the header,
// the trailer, the index and meta's CRC-32C, the meta block and every
// record (contiguous items, labels, sizes, encodings), and returns a
// Reader. name stands for the file in messages.
func NewReader(ra io.ReaderAt, size int64, name string) (*Reader, error) {
	r := &Reader{ra: ra, name: name}
	t, err := r.readEnds(size)
	if err != nil {
		return nil, err
	}
	tail := make([]byte, t.count*recordSize+t.metaLength)
	if err := r.readAt(tail, t.indexOffset, "index"); err != nil {
		return nil, err
	}
	if got := Checksum(tail); got != t.crc {
		return nil, r.errorf("the index and meta have CRC-32C %08x, the trailer records %08x: the file is corrupt", got, t.crc)
	}
	index, meta := tail[:t.count*recordSize], tail[t.count*recordSize:]
	if err := r.parseMeta(meta); err != nil {
		return nil, err
	}
	if err := r.parseIndex(index, t.indexOffset); err != nil {
		return nil, err
	}
	return r, nil
}

// readEnds checks the header and returns the checked trailer.
func (r *Reader) readEnds(size int64) (trailer, error) {
	if size < headerSize+trailerSize {
		return trailer{}, r.errorf("%d bytes, shorter than a header and a trailer (%d): not a prepared data set, or truncated", size, headerSize+trailerSize)
	}
	h := make([]byte, headerSize)
	if err := r.readAt(h, 0, "header"); err != nil {
		return trailer{}, err
	}
	if !bytes.Equal(h[:8], headerMagic[:]) {
		return trailer{}, r.errorf("header starts %q, want %q: not a prepared data set", h[:8], headerMagic[:])
	}
	if v := binary.LittleEndian.Uint32(h[8:]); v != version {
		return trailer{}, r.errorf("header: version %d, want %d", v, version)
	}
	if z := binary.LittleEndian.Uint32(h[12:]); z != 0 {
		return trailer{}, r.errorf("header: reserved word %#x, want 0", z)
	}
	b := make([]byte, trailerSize)
	if err := r.readAt(b, size-trailerSize, "trailer"); err != nil {
		return trailer{}, err
	}
	if !bytes.Equal(b[24:], trailerMagic[:]) {
		return trailer{}, r.errorf("trailer ends %q, want %q: the file is truncated (a write that did not finish?)", b[24:], trailerMagic[:])
	}
	le := binary.LittleEndian
	t := trailer{indexOffset: int64(le.Uint64(b)), count: int64(le.Uint64(b[8:])), metaLength: int64(le.Uint32(b[16:])), crc: le.Uint32(b[20:])}
	body := size - trailerSize
	switch {
	case t.metaLength > maxMeta:
		return t, r.errorf("trailer: meta length %d, more than %d", t.metaLength, maxMeta)
	case t.indexOffset < headerSize || t.indexOffset > body:
		return t, r.errorf("trailer: index offset %d outside [%d, %d]", uint64(t.indexOffset), headerSize, body)
	case t.count < 0 || t.count > (body-t.indexOffset)/recordSize:
		return t, r.errorf("trailer: %d items do not fit between the index offset %d and the trailer at %d", uint64(t.count), t.indexOffset, body)
	case t.indexOffset+t.count*recordSize+t.metaLength != body:
		return t, r.errorf("trailer: index offset %d + %d items × %d + meta length %d ≠ %d, where the trailer starts", t.indexOffset, t.count, recordSize, t.metaLength, body)
	}
	return t, nil
}

func (r *Reader) parseMeta(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r.meta); err != nil {
		return r.errorf("meta: %v", err)
	}
	if dec.More() {
		return r.errorf("meta: data after the JSON object")
	}
	if err := checkMeta(r.meta); err != nil {
		return r.errorf("meta: %v", err)
	}
	return nil
}

func (r *Reader) parseIndex(b []byte, indexOffset int64) error {
	r.records = make([]Record, len(b)/recordSize)
	next := int64(headerSize)
	for i := range r.records {
		rec, err := decodeRecord(b[i*recordSize:])
		if err == nil && rec.Offset != next {
			err = fmt.Errorf("offset %d, want %d (right after item %d)", rec.Offset, next, i-1)
		}
		if err == nil {
			err = checkRecord(rec, r.meta)
		}
		if err != nil {
			return r.errorf("index: item %d: %v", i, err)
		}
		next += int64(rec.Length)
		if next > indexOffset {
			return r.errorf("index: item %d: ends at %d, past the index at %d", i, next, indexOffset)
		}
		r.records[i] = rec
	}
	if next != indexOffset {
		return r.errorf("index: the items end at %d, the index starts at %d", next, indexOffset)
	}
	return nil
}

// Len returns the number of items.
func (r *Reader) Len() int { return len(r.records) }

// Meta returns the file's description.
func (r *Reader) Meta() Meta { return r.meta }

// Name returns the file's name, as messages give it.
func (r *Reader) Name() string { return r.name }

// Record returns item i's index entry (0 <= i < Len()).
func (r *Reader) Record(i int) Record { return r.records[i] }

// Read returns item i's bytes, read into buf when it is large enough, and
// checks them against the record's CRC-32C.
func (r *Reader) Read(i int, buf []byte) ([]byte, error) {
	if i < 0 || i >= len(r.records) {
		return nil, r.errorf("item %d outside [0, %d)", i, len(r.records))
	}
	rec := r.records[i]
	if cap(buf) < rec.Length {
		buf = make([]byte, rec.Length)
	}
	buf = buf[:rec.Length]
	if err := r.readAt(buf, rec.Offset, fmt.Sprintf("item %d", i)); err != nil {
		return nil, err
	}
	if err := r.checkItem(i, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

// View returns item i's bytes, checked against the record's CRC-32C, as
// Read does, but without copying them where Open mapped the file into
// memory (on Linux, macOS and FreeBSD): then mapped is true and the bytes
// are the mapping's, which must not be modified and must not be used
// after Close (a file truncated in place while mapped faults on the next
// read of the lost part; the prepare command replaces a file by renaming
// a new one over it, which leaves the mapped one whole). Elsewhere View
// reads into buf, as Read does.
func (r *Reader) View(i int, buf []byte) (b []byte, mapped bool, err error) {
	if r.mapped == nil {
		b, err = r.Read(i, buf)
		return b, false, err
	}
	if i < 0 || i >= len(r.records) {
		return nil, false, r.errorf("item %d outside [0, %d)", i, len(r.records))
	}
	rec := r.records[i]
	b = r.mapped[rec.Offset:][:rec.Length:rec.Length]
	if err := r.checkItem(i, b); err != nil {
		return nil, false, err
	}
	return b, true, nil
}

// checkItem checks item i's bytes b against its record's CRC-32C.
func (r *Reader) checkItem(i int, b []byte) error {
	if got, want := Checksum(b), r.records[i].CRC; got != want {
		return r.errorf("item %d: CRC-32C %08x, the index records %08x: the item's bytes are corrupt", i, got, want)
	}
	return nil
}

// Close closes the file Open opened and releases its mapping.
func (r *Reader) Close() error {
	var err error
	if r.mapped != nil {
		err = unmapFile(r.mapped)
		r.mapped = nil
	}
	if r.closer == nil {
		return err
	}
	if cerr := r.closer.Close(); err == nil {
		err = cerr
	}
	return err
}

func (r *Reader) readAt(b []byte, off int64, what string) error {
	n, err := r.ra.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return r.errorf("%s: reading %d bytes at %d: %v", what, len(b), off, err)
}

func (r *Reader) errorf(format string, args ...any) error {
	return fmt.Errorf("imageshard: %s: %s", r.name, fmt.Sprintf(format, args...))
}
