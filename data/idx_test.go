package data

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// idxBytes encodes an IDX file: magic, big-endian dimensions, data.
func idxBytes(magic uint32, dims []int, data []byte) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.BigEndian, magic)
	for _, d := range dims {
		binary.Write(&b, binary.BigEndian, uint32(d))
	}
	b.Write(data)
	return b.Bytes()
}

func gz(data []byte) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(data)
	zw.Close()
	return b.Bytes()
}

func TestEmbeddedFashionMNIST(t *testing.T) {
	for _, tc := range []struct {
		split  Split
		n      int
		counts []int
	}{
		{Train, 10000, []int{942, 1027, 1016, 1019, 974, 989, 1021, 1022, 990, 1000}},
		{Test, 2000, []int{200, 203, 214, 190, 219, 195, 197, 200, 194, 188}},
	} {
		m, err := EmbeddedFashionMNIST(tc.split)
		if err != nil {
			t.Fatal(err)
		}
		if c, h, w := m.Shape(); m.Len() != tc.n || c != 1 || h != 28 || w != 28 {
			t.Fatalf("%v: %d images of %dx%dx%d", tc.split, m.Len(), c, h, w)
		}
		counts := make([]int, 10)
		for _, l := range m.Labels {
			counts[l]++
		}
		for i := range counts {
			if counts[i] != tc.counts[i] {
				t.Errorf("%v: class counts %v, want %v", tc.split, counts, tc.counts)
				break
			}
		}
	}
	if !strings.Contains(EmbeddedFashionMNISTLicense(), "Zalando SE") {
		t.Error("licence text missing")
	}
}

// The embedded records are the first records of the full Debian set.
func TestEmbeddedMatchesFullFashionMNIST(t *testing.T) {
	if _, err := os.Stat(DefaultFashionMNISTDir); err != nil {
		t.Skip("full Fashion-MNIST not installed")
	}
	for _, split := range []Split{Train, Test} {
		full, err := FashionMNIST("", split)
		if err != nil {
			t.Fatal(err)
		}
		sub, _ := EmbeddedFashionMNIST(split)
		want := map[Split]int{Train: 60000, Test: 10000}[split]
		if full.Len() != want {
			t.Fatalf("%v: full set has %d images, want %d", split, full.Len(), want)
		}
		if !bytes.Equal(full.Pix[:len(sub.Pix)], sub.Pix) {
			t.Errorf("%v: embedded pixels differ from the first %d records of the full set", split, sub.Len())
		}
		for i := range sub.Labels {
			if sub.Labels[i] != full.Labels[i] {
				t.Fatalf("%v: label %d differs", split, i)
			}
		}
	}
}

// Real records written back to IDX files, gzipped and plain, read back
// unchanged.
func TestOpenIDXRoundTrip(t *testing.T) {
	sub, err := EmbeddedFashionMNIST(Test)
	if err != nil {
		t.Fatal(err)
	}
	n := 100
	lab := make([]byte, n)
	for i := range lab {
		lab[i] = byte(sub.Labels[i])
	}
	images := idxBytes(idxImagesMagic, []int{n, 28, 28}, sub.Pix[:n*784])
	labels := idxBytes(idxLabelsMagic, []int{n}, lab)
	dir := t.TempDir()
	for _, zip := range []bool{false, true} {
		ip, lp := filepath.Join(dir, "img"), filepath.Join(dir, "lab")
		if zip {
			images, labels = gz(images), gz(labels)
		}
		os.WriteFile(ip, images, 0o644)
		os.WriteFile(lp, labels, 0o644)
		m, err := OpenIDX(ip, lp, FashionMNISTClasses())
		if err != nil {
			t.Fatal(err)
		}
		if m.Len() != n || !bytes.Equal(m.Pix, sub.Pix[:n*784]) {
			t.Fatalf("gzip=%v: round trip differs", zip)
		}
		img, l, _ := m.Item(7)
		if l != sub.Labels[7] || img.Pix[400] != float32(sub.Pix[7*784+400])/255 {
			t.Errorf("item 7: label %d pixel %v", l, img.Pix[400])
		}
	}
	// The official file names in a folder, gzipped or not.
	os.WriteFile(filepath.Join(dir, "t10k-images-idx3-ubyte"), idxBytes(idxImagesMagic, []int{n, 28, 28}, sub.Pix[:n*784]), 0o644)
	os.WriteFile(filepath.Join(dir, "t10k-labels-idx1-ubyte.gz"), gz(idxBytes(idxLabelsMagic, []int{n}, lab)), 0o644)
	if m, err := MNIST(dir, Test); err != nil || m.Len() != n || m.Classes()[3] != "3" {
		t.Errorf("MNIST(dir): %v", err)
	}
	if _, err := FashionMNIST(dir, Train); err == nil || !strings.Contains(err.Error(), "train-images-idx3-ubyte") {
		t.Errorf("missing train files: %v", err)
	}
}

func TestIDXBadInput(t *testing.T) {
	pix := make([]byte, 3*2*2)
	goodImg := idxBytes(idxImagesMagic, []int{3, 2, 2}, pix)
	goodLab := idxBytes(idxLabelsMagic, []int{3}, []byte{0, 1, 2})
	for name, tc := range map[string]struct {
		img, lab []byte
		want     []string
	}{
		"labels magic":      {goodImg, idxBytes(idxImagesMagic, []int{3}, []byte{0, 1, 2}), []string{"lab", "magic number 0x00000803 at offset 0, want 0x00000801"}},
		"images magic":      {idxBytes(0x00000c03, []int{3, 2, 2}, pix), goodLab, []string{"img", "0x00000c03"}},
		"short magic":       {goodImg[:3], goodLab, []string{"img", "truncated IDX header: 3 of 4"}},
		"short dims":        {goodImg[:9], goodLab, []string{"img", "5 of 12 dimension bytes"}},
		"truncated data":    {goodImg[:len(goodImg)-5], goodLab, []string{"img", "truncated: data ends at offset 23 in record 1", "3 records of 4 bytes"}},
		"oversize":          {append(append([]byte(nil), goodImg...), 9), goodLab, []string{"img", "oversize", "offset 28"}},
		"label range":       {goodImg, idxBytes(idxLabelsMagic, []int{3}, []byte{0, 10, 2}), []string{"lab", "record 1 (offset 9): label 10 outside [0, 10)"}},
		"count mismatch":    {goodImg, idxBytes(idxLabelsMagic, []int{2}, []byte{0, 1}), []string{"holds 3 images", "2 labels"}},
		"zero dim":          {idxBytes(idxImagesMagic, []int{3, 0, 2}, nil), goodLab, []string{"img", "dimension 1 (offset 8) is 0"}},
		"huge":              {idxBytes(idxImagesMagic, []int{1 << 30, 1 << 10, 1 << 10}, nil), goodLab, []string{"img", "more than"}},
		"corrupt gzip":      {gz(goodImg)[:20], goodLab, []string{"img"}},
		"truncated gzipped": {gz(goodImg[:len(goodImg)-5]), goodLab, []string{"img", "truncated"}},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			ip, lp := filepath.Join(dir, "img"), filepath.Join(dir, "lab")
			os.WriteFile(ip, tc.img, 0o644)
			os.WriteFile(lp, tc.lab, 0o644)
			_, err := OpenIDX(ip, lp, FashionMNISTClasses())
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}
