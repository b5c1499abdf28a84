package data

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
)

// IDX magic numbers (two zero bytes, type 0x08 = unsigned byte, number of
// dimensions).
const (
	idxLabelsMagic = 0x00000801
	idxImagesMagic = 0x00000803
	// maxIDXBytes bounds the data size an IDX header may declare.
	maxIDXBytes = 1 << 32
)

// readIDX reads an IDX file of unsigned bytes with the given magic number
// from r (gzipped or not). It returns the dimensions and the data, and fails
// on a wrong magic number, a truncated header or data, and bytes after the
// declared data. name is used in messages.
func readIDX(r io.Reader, name string, magic uint32) (dims []int, data []byte, err error) {
	r, err = maybeGunzip(r, name)
	if err != nil {
		return nil, nil, err
	}
	var head [4]byte
	if n, err := io.ReadFull(r, head[:]); err != nil {
		return nil, nil, fmt.Errorf("data: %s: truncated IDX header: %d of 4 magic bytes", name, n)
	}
	if got := binary.BigEndian.Uint32(head[:]); got != magic {
		return nil, nil, fmt.Errorf("data: %s: IDX magic number 0x%08x at offset 0, want 0x%08x (%s)", name, got, magic, idxKind(magic))
	}
	nd := int(head[3])
	raw := make([]byte, 4*nd)
	if n, err := io.ReadFull(r, raw); err != nil {
		return nil, nil, fmt.Errorf("data: %s: truncated IDX header: %d of %d dimension bytes at offset 4", name, n, len(raw))
	}
	total := uint64(1)
	dims = make([]int, nd)
	for i := range dims {
		d := binary.BigEndian.Uint32(raw[4*i:])
		if d == 0 && i > 0 {
			return nil, nil, fmt.Errorf("data: %s: IDX dimension %d (offset %d) is 0", name, i, 4+4*i)
		}
		total *= uint64(d)
		if total > maxIDXBytes {
			return nil, nil, fmt.Errorf("data: %s: IDX header declares more than %d bytes of data", name, uint64(maxIDXBytes))
		}
		dims[i] = int(d)
	}
	start := 4 + 4*nd
	data, err = io.ReadAll(io.LimitReader(r, int64(total)+1))
	if err != nil {
		return nil, nil, fmt.Errorf("data: %s: reading IDX data at offset %d: %w", name, start+len(data), err)
	}
	if uint64(len(data)) < total {
		rec := 1
		for _, d := range dims[1:] {
			rec *= d
		}
		return nil, nil, fmt.Errorf("data: %s: truncated: data ends at offset %d in record %d, header declares %d records of %d bytes", name, start+len(data), len(data)/rec, dims[0], rec)
	}
	if uint64(len(data)) > total {
		return nil, nil, fmt.Errorf("data: %s: oversize: bytes after the declared data at offset %d", name, start+int(total))
	}
	return dims, data, nil
}

func idxKind(magic uint32) string {
	if magic == idxImagesMagic {
		return "unsigned byte images, 3 dimensions"
	}
	return "unsigned byte labels, 1 dimension"
}

// decodeIDX reads an images and a labels IDX stream into a Memory dataset.
func decodeIDX(images io.Reader, imagesName string, labels io.Reader, labelsName string, classes []string) (*Memory, error) {
	idims, pix, err := readIDX(images, imagesName, idxImagesMagic)
	if err != nil {
		return nil, err
	}
	ldims, lab, err := readIDX(labels, labelsName, idxLabelsMagic)
	if err != nil {
		return nil, err
	}
	if idims[0] != ldims[0] {
		return nil, fmt.Errorf("data: %s holds %d images but %s holds %d labels", imagesName, idims[0], labelsName, ldims[0])
	}
	m := &Memory{Name: imagesName, N: idims[0], C: 1, H: idims[1], W: idims[2], Pix: pix, Labels: make([]int, len(lab)), ClassNames: classes}
	for i, l := range lab {
		if int(l) >= len(classes) {
			return nil, fmt.Errorf("data: %s: record %d (offset %d): label %d outside [0, %d)", labelsName, i, 8+i, l, len(classes))
		}
		m.Labels[i] = int(l)
	}
	return newMemory(m)
}

// OpenIDX reads an MNIST-style pair of IDX files (images: magic 0x803,
// (N, H, W) bytes; labels: magic 0x801, (N,) bytes), each gzipped or not, into
// a single-channel dataset. Labels must be below len(classes).
func OpenIDX(imagesPath, labelsPath string, classes []string) (*Memory, error) {
	fi, err := os.Open(imagesPath)
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	defer fi.Close()
	fl, err := os.Open(labelsPath)
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	defer fl.Close()
	return decodeIDX(fi, imagesPath, fl, labelsPath, classes)
}
