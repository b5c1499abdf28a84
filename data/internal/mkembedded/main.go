// Command mkembedded writes the Fashion-MNIST subset embedded in package
// data: the first 10,000 training and the first 2,000 test records of the
// full set, as gzipped IDX files under the official names.
//
//	go run ./data/internal/mkembedded [-src /usr/share/datasets/fashion-mnist] [-dst data/embedded/fashion-mnist]
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

func main() {
	src := flag.String("src", "/usr/share/datasets/fashion-mnist", "folder of the full Fashion-MNIST (gzipped IDX files)")
	dst := flag.String("dst", "data/embedded/fashion-mnist", "output folder")
	flag.Parse()
	for _, s := range []struct {
		prefix string
		n      int
	}{{"train", 10000}, {"t10k", 2000}} {
		for _, kind := range []string{"images-idx3-ubyte", "labels-idx1-ubyte"} {
			name := s.prefix + "-" + kind + ".gz"
			if err := subset(filepath.Join(*src, name), filepath.Join(*dst, name), s.n); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
	}
}

// subset copies the first n records of a gzipped IDX file into a new gzipped
// IDX file whose first dimension is n.
func subset(in, out string, n int) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	if len(raw) < 8 {
		return fmt.Errorf("%s: short file", in)
	}
	nd := int(raw[3])
	head := 4 + 4*nd
	rec := 1
	for i := 1; i < nd; i++ {
		rec *= int(binary.BigEndian.Uint32(raw[4+4*i:]))
	}
	if len(raw) < head+n*rec {
		return fmt.Errorf("%s: fewer than %d records", in, n)
	}
	body := append([]byte(nil), raw[:head+n*rec]...)
	binary.BigEndian.PutUint32(body[4:], uint32(n))
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return err
	}
	if _, err := zw.Write(body); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(out, buf.Bytes(), 0o644)
}
