package imageshard

import (
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"math"

	"github.com/vit-train/vit-train/formats/atomicfile"
)

// Writer streams items to a file: Add appends each item's bytes, Finish
// writes the index and the trailer. Records are kept in memory (32 bytes an
// item) until Finish.
type Writer struct {
	w     io.Writer
	meta  Meta
	off   int64  // bytes written so far
	index []byte // the records, encoded
	err   error  // the first write error; every later call returns it
}

// NewWriter checks meta and writes the header to w.
func NewWriter(w io.Writer, meta Meta) (*Writer, error) {
	if err := checkMeta(meta); err != nil {
		return nil, fmt.Errorf("imageshard: meta: %w", err)
	}
	sw := &Writer{w: w, meta: meta}
	sw.write(header())
	return sw, sw.err
}

func (w *Writer) write(b []byte) {
	if w.err != nil {
		return
	}
	n, err := w.w.Write(b)
	w.off += int64(n)
	w.err = err
}

// Add appends item Len() with the given bytes, label, size and encoding.
func (w *Writer) Add(b []byte, label, height, width int, enc Encoding) error {
	if w.err != nil {
		return w.err
	}
	if len(b) > math.MaxUint32 {
		return fmt.Errorf("imageshard: item %d: %d bytes, more than a record can hold", w.Len(), len(b))
	}
	r := Record{Offset: w.off, Length: len(b), Label: label, Height: height, Width: width, Encoding: enc, CRC: Checksum(b)}
	if err := checkRecord(r, w.meta); err != nil {
		return fmt.Errorf("imageshard: item %d: %w", w.Len(), err)
	}
	w.write(b)
	w.index = r.appendTo(w.index)
	return w.err
}

// Len returns the number of items added.
func (w *Writer) Len() int { return len(w.index) / recordSize }

// Finish writes the index, the meta block and the trailer. The Writer
// must not be used afterwards.
func (w *Writer) Finish() error {
	meta, err := json.Marshal(w.meta)
	if err != nil {
		return fmt.Errorf("imageshard: meta: %w", err)
	}
	if len(meta) > maxMeta {
		return fmt.Errorf("imageshard: meta: %d bytes of class names, more than %d", len(meta), maxMeta)
	}
	t := trailer{indexOffset: w.off, count: int64(w.Len()), metaLength: int64(len(meta))}
	t.crc = crc32.Update(Checksum(w.index), castagnoli, meta)
	w.write(w.index)
	w.write(meta)
	w.write(t.bytes())
	return w.err
}

// WriteFile writes a file at path atomically (formats/atomicfile): add
// adds the items to a Writer opened with meta, and the file appears under
// path only once it is complete and on disk. If add fails, or the process
// is killed, or the disk is full, path is left as it was.
func WriteFile(path string, meta Meta, add func(*Writer) error) error {
	return atomicfile.Write(path, func(f io.Writer) error {
		w, err := NewWriter(f, meta)
		if err != nil {
			return err
		}
		if err := add(w); err != nil {
			return err
		}
		return w.Finish()
	})
}
