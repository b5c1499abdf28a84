package data

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"image"
	"image/color"
	"io"
	"strings"
	"testing"
)

func FuzzReadIDX(f *testing.F) {
	f.Add(idxBytes(idxImagesMagic, []int{2, 2, 2}, make([]byte, 8)), true)
	f.Add(idxBytes(idxLabelsMagic, []int{3}, []byte{1, 2, 3}), false)
	f.Add(gz(idxBytes(idxLabelsMagic, []int{3}, []byte{1, 2, 3})), false)
	f.Add([]byte{0, 0, 8, 3, 0xff, 0xff, 0xff, 0xff}, true)
	f.Fuzz(func(t *testing.T, data []byte, images bool) {
		magic := uint32(idxLabelsMagic)
		if images {
			magic = idxImagesMagic
		}
		dims, out, err := readIDX(bytes.NewReader(data), "fuzz.idx", magic)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.idx") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		n := 1
		for _, d := range dims {
			n *= d
		}
		if len(out) != n {
			t.Fatalf("dims %v but %d bytes", dims, len(out))
		}
		if images {
			lab := idxBytes(idxLabelsMagic, []int{dims[0]}, make([]byte, dims[0]))
			m, err := decodeIDX(bytes.NewReader(data), "i", bytes.NewReader(lab), "l", MNISTClasses())
			if err != nil {
				t.Fatal(err)
			}
			if m.Len() > 0 {
				if _, _, err := m.Item(m.Len() - 1); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}

// FuzzParseCIFARRecords parses record files built from fuzzed label bytes
// (each record: its label bytes, then deterministic pixels, which the
// parser copies without looking at) with trailing bytes and a fuzzed cut.
// Inputs stay a few bytes long: Go's fuzzer minimises every input that
// reaches new code in time quadratic in its length, and raw 6 kB
// two-record inputs kept the only worker minimising for up to a minute.
func FuzzParseCIFARRecords(f *testing.F) {
	f.Add([]byte{0, 1}, uint16(0), false)
	f.Add([]byte{3, 7, 19, 99}, uint16(0), true)
	f.Add([]byte{10, 1}, uint16(0), false)
	f.Add([]byte{9, 2, 4}, uint16(0), false)
	f.Add([]byte{1, 2}, uint16(1), false)
	f.Fuzz(func(t *testing.T, labels []byte, cut uint16, hundred bool) {
		spec := smallSpec(cifar10Spec, 2)
		if hundred {
			spec = smallSpec(cifar100Spec(false), 2)
		}
		lb := spec.labelBytes
		var data []byte
		g := 0
		for ; len(labels) >= lb && g < 4; g++ {
			data = append(data, labels[:lb]...)
			labels = labels[lb:]
			for c := 0; c < 3; c++ {
				for y := 0; y < 32; y++ {
					for x := 0; x < 32; x++ {
						data = append(data, cifarPixel(g, c, y, x))
					}
				}
			}
		}
		data = append(data, labels...) // bytes past the last whole record
		data = data[:len(data)-int(cut)%(len(data)+1)]
		m := &Memory{C: 3, H: 32, W: 32, ClassNames: make([]string, spec.classes)}
		err := parseCIFARRecords(data, "fuzz.bin", &spec, 2, m)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.bin") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		m.N = len(m.Labels)
		if _, err := newMemory(m); err != nil || m.N != 2 {
			t.Fatalf("accepted records do not form a dataset: %v", err)
		}
		rs := spec.recordSize()
		for r := range 2 {
			if m.Labels[r] != int(data[r*rs+spec.labelIndex]) || !bytes.Equal(m.Pix[r*cifarPixels:(r+1)*cifarPixels], data[r*rs+lb:(r+1)*rs]) {
				t.Fatalf("record %d read wrongly", r)
			}
		}
	})
}

// cifarTarLimits are the members FuzzReadCIFARTar* look for.
var cifarTarLimits = map[string]int64{"batches.meta.txt": 1 << 10, "test_batch.bin": 3073}

func checkCIFARTar(t *testing.T, out map[string]namedData, err error) {
	if err != nil {
		if !strings.Contains(err.Error(), "fuzz.tar.gz") {
			t.Fatalf("error does not name the archive: %v", err)
		}
		return
	}
	for name, limit := range cifarTarLimits {
		if int64(len(out[name].data)) > limit {
			t.Fatalf("%s: %d bytes past the limit", name, len(out[name].data))
		}
	}
}

// FuzzReadCIFARTar reads arbitrary bytes as a (gzipped) tar archive. The
// seeds stay small (a plain tar of the two members is 5.6 kB; see
// FuzzParseCIFARRecords); FuzzReadCIFARTarEntries covers well-formed
// archives.
func FuzzReadCIFARTar(f *testing.F) {
	var buf bytes.Buffer
	files := map[string][]byte{"batches.meta.txt": []byte("c0\n"), "test_batch.bin": {7}}
	writeTarBuffer(&buf, "cifar-10-batches-bin", files)
	f.Add(gz(buf.Bytes()))
	f.Add([]byte("not a tar"))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := readTar(bytes.NewReader(data), "fuzz.tar.gz", "cifar-10-batches-bin", cifarTarLimits)
		checkCIFARTar(t, out, err)
	})
}

// FuzzReadCIFARTarEntries builds well-formed archives (valid header
// checksums) of two members with fuzzed names, sizes and types, plain or
// gzipped, so that mutations reach readTar's member handling.
func FuzzReadCIFARTarEntries(f *testing.F) {
	f.Add("cifar-10-batches-bin/batches.meta.txt", uint16(30), byte(tar.TypeReg), "cifar-10-batches-bin/test_batch.bin", uint16(3073), byte(tar.TypeReg), true)
	f.Add("./cifar-10-batches-bin/test_batch.bin", uint16(4000), byte(tar.TypeReg), "cifar-10-batches-bin//batches.meta.txt", uint16(0), byte(tar.TypeSymlink), false)
	f.Add("cifar-10-batches-bin/../cifar-10-batches-bin/batches.meta.txt", uint16(1), byte(tar.TypeDir), "x", uint16(1), byte(tar.TypeReg), false)
	zw := gzip.NewWriter(nil) // reset for each input: a new one allocates ~800 kB
	f.Fuzz(func(t *testing.T, name1 string, size1 uint16, type1 byte, name2 string, size2 uint16, type2 byte, gzipped bool) {
		var buf bytes.Buffer
		var w io.Writer = &buf
		if gzipped {
			zw.Reset(&buf)
			w = zw
		}
		tw := tar.NewWriter(w)
		for _, e := range []struct {
			name string
			size int
			typ  byte
		}{{name1, int(size1) % 5000, type1}, {name2, int(size2) % 5000, type2}} {
			hdr := &tar.Header{Name: e.name, Typeflag: e.typ, Mode: 0o644}
			if e.typ == tar.TypeReg {
				hdr.Size = int64(e.size)
			}
			if tw.WriteHeader(hdr) != nil {
				return
			}
			if hdr.Size > 0 {
				tw.Write(bytes.Repeat([]byte{'7'}, e.size))
			}
		}
		if tw.Close() != nil {
			return
		}
		if gzipped && zw.Close() != nil {
			return
		}
		out, err := readTar(bytes.NewReader(buf.Bytes()), "fuzz.tar.gz", "cifar-10-batches-bin", cifarTarLimits)
		checkCIFARTar(t, out, err)
	})
}

func FuzzDecodeImage(f *testing.F) {
	m := image.NewNRGBA(image.Rect(0, 0, 5, 3))
	for i := range m.Pix {
		m.Pix[i] = uint8(i * 37)
	}
	g := image.NewGray16(image.Rect(0, 0, 2, 2))
	g.SetGray16(1, 1, color.Gray16{Y: 60000})
	f.Add(encodePNG(m))
	f.Add(encodePNG(g))
	f.Add(encodeJPEG(m))
	f.Add([]byte("\x89PNG\r\n\x1a\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		img, err := DecodeImage(data, "fuzz.img", 1<<16)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.img") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if err := img.Valid(); err != nil || img.C != 3 {
			t.Fatalf("decoded image invalid: %v", err)
		}
		for _, v := range img.Pix {
			if v < 0 || v > 1 {
				t.Fatalf("value %v", v)
			}
		}
	})
}

func FuzzParseClassNames(f *testing.F) {
	f.Add(classLines("c", 10), 10)
	f.Add([]byte("a\r\nb\n\n\n"), 2)
	f.Fuzz(func(t *testing.T, data []byte, want int) {
		names, err := parseClassNames(data, "fuzz.txt", want)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.txt") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if len(names) != want {
			t.Fatalf("%d names, want %d", len(names), want)
		}
		for _, n := range names {
			if n == "" || strings.TrimSpace(n) != n {
				t.Fatalf("name %q", n)
			}
		}
	})
}
