package data

import (
	"bytes"
	"image"
	"image/color"
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
			m, err := decodeIDX(bytes.NewReader(data), "i", bytes.NewReader(lab), "l", MNISTClasses)
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

func FuzzParseCIFARRecords(f *testing.F) {
	f.Add(cifarRecords(0, 2, cifar10Label), false)
	f.Add(cifarRecords(0, 2, cifar100Label), true)
	f.Add([]byte{9}, false)
	f.Fuzz(func(t *testing.T, data []byte, hundred bool) {
		spec := smallSpec(cifar10Spec, 2)
		if hundred {
			spec = smallSpec(cifar100Spec(false), 2)
		}
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
	})
}

func FuzzReadCIFARTar(f *testing.F) {
	var buf bytes.Buffer
	files := map[string][]byte{"batches.meta.txt": classLines("c", 10), "test_batch.bin": cifarRecords(0, 1, cifar10Label)}
	writeTarBuffer(&buf, "cifar-10-batches-bin", files)
	f.Add(buf.Bytes())
	f.Add(gz(buf.Bytes()))
	f.Add([]byte("not a tar"))
	f.Fuzz(func(t *testing.T, data []byte) {
		limits := map[string]int64{"batches.meta.txt": 1 << 10, "test_batch.bin": 3073}
		out, err := readTar(bytes.NewReader(data), "fuzz.tar.gz", "cifar-10-batches-bin", limits)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.tar.gz") {
				t.Fatalf("error does not name the archive: %v", err)
			}
			return
		}
		for name, limit := range limits {
			if int64(len(out[name].data)) > limit {
				t.Fatalf("%s: %d bytes past the limit", name, len(out[name].data))
			}
		}
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
