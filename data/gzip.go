package data

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
)

// maybeGunzip returns a reader of the uncompressed content of r when r starts
// with the gzip magic bytes, else r itself (buffered).
func maybeGunzip(r io.Reader, name string) (io.Reader, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	magic, err := br.Peek(2)
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("data: %s: %w", name, err)
	}
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("data: %s: gzip header: %w", name, err)
		}
		return zr, nil
	}
	return br, nil
}
