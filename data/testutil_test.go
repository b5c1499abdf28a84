package data

import (
	"archive/tar"
	"bytes"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"sort"
)

// writeTarBuffer writes files as dir/name members of a plain tar stream.
func writeTarBuffer(w io.Writer, dir string, files map[string][]byte) {
	tw := tar.NewWriter(w)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		tw.WriteHeader(&tar.Header{Name: dir + "/" + n, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(files[n]))})
		tw.Write(files[n])
	}
	tw.Close()
}

func encodePNG(m image.Image) []byte {
	var b bytes.Buffer
	png.Encode(&b, m)
	return b.Bytes()
}

func encodeJPEG(m image.Image) []byte { return encodeJPEGQ(m, 80) }

func encodeJPEGQ(m image.Image, q int) []byte {
	var b bytes.Buffer
	jpeg.Encode(&b, m, &jpeg.Options{Quality: q})
	return b.Bytes()
}
