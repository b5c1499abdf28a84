package data

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cifarPixel is the test pattern: the byte at (channel c, row y, column x) of
// record g.
func cifarPixel(g, c, y, x int) byte { return byte(g*7 + c*31 + y*5 + x*3) }

// cifarRecords writes n records in the official layout, byte by byte: the
// label bytes, then 1024 red, 1024 green and 1024 blue bytes, each plane
// row-major. Record k is global record first+k.
func cifarRecords(first, n int, labels func(g int) []byte) []byte {
	var b bytes.Buffer
	for g := first; g < first+n; g++ {
		for _, l := range labels(g) {
			b.WriteByte(l)
		}
		for c := 0; c < 3; c++ {
			for y := 0; y < 32; y++ {
				for x := 0; x < 32; x++ {
					b.WriteByte(cifarPixel(g, c, y, x))
				}
			}
		}
	}
	return b.Bytes()
}

func cifar10Label(g int) []byte  { return []byte{byte(g % 10)} }
func cifar100Label(g int) []byte { return []byte{byte(g % 20), byte((g * 3) % 100)} }

func classLines(prefix string, n int) []byte {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%s%d\n", prefix, i)
	}
	b.WriteString("\n") // the official files end with a blank line
	return []byte(b.String())
}

// smallSpec returns spec with every data file holding n records.
func smallSpec(spec cifarSpec, n int) cifarSpec {
	spec.records = map[string]int{}
	for _, fs := range spec.files {
		for _, f := range fs {
			spec.records[f] = n
		}
	}
	return spec
}

// writeCIFAR10Tree writes a CIFAR-10 folder with n records per file under
// root/cifar-10-batches-bin and returns the file contents by name.
func writeCIFAR10Tree(t *testing.T, root string, n int) map[string][]byte {
	t.Helper()
	files := map[string][]byte{"batches.meta.txt": classLines("class", 10)}
	for k, f := range cifar10Spec.files[Train] {
		files[f] = cifarRecords(k*n, n, cifar10Label)
	}
	files["test_batch.bin"] = cifarRecords(1000, n, cifar10Label)
	writeTree(t, filepath.Join(root, "cifar-10-batches-bin"), files)
	return files
}

func writeTree(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// writeTarGz writes files as dir/name members of a gzipped tar archive.
func writeTarGz(t *testing.T, path, dir string, files map[string][]byte) {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	tw := tar.NewWriter(zw)
	tw.WriteHeader(&tar.Header{Name: dir + "/", Typeflag: tar.TypeDir, Mode: 0o755})
	for name, data := range files {
		if err := tw.WriteHeader(&tar.Header{Name: dir + "/" + name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(data))}); err != nil {
			t.Fatal(err)
		}
		tw.Write(data)
	}
	tw.Close()
	zw.Close()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkCIFAR compares items of m with the test pattern: item items[k] must
// be record records[k].
func checkCIFAR(t *testing.T, m *Memory, items, records []int, label func(g int) int) {
	t.Helper()
	for k, i := range items {
		g := records[k]
		img, l, err := m.Item(i)
		if err != nil {
			t.Fatal(err)
		}
		if l != label(g) {
			t.Fatalf("item %d: label %d, want %d", i, l, label(g))
		}
		if img.C != 3 || img.H != 32 || img.W != 32 {
			t.Fatalf("item %d: shape %dx%dx%d", i, img.C, img.H, img.W)
		}
		for c := 0; c < 3; c++ {
			for y := 0; y < 32; y++ {
				for x := 0; x < 32; x++ {
					want := float32(cifarPixel(g, c, y, x)) / 255
					if v := img.Pix[(c*32+y)*32+x]; v != want {
						t.Fatalf("item %d (record %d) pixel (%d,%d,%d) = %v, want %v", i, g, c, y, x, v, want)
					}
				}
			}
		}
	}
}

func seq(from, n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = from + i
	}
	return s
}

func TestCIFAR10FolderAndArchive(t *testing.T) {
	root := t.TempDir()
	files := writeCIFAR10Tree(t, root, 3)
	archive := filepath.Join(root, "cifar-10-binary.tar.gz")
	writeTarGz(t, archive, "cifar-10-batches-bin", files)
	spec := smallSpec(cifar10Spec, 3)
	for _, p := range []string{root, filepath.Join(root, "cifar-10-batches-bin"), archive} {
		train, err := openCIFAR(p, &spec, Train)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if train.Len() != 15 || len(train.Classes()) != 10 || train.Classes()[3] != "class3" {
			t.Fatalf("%s: %d items, classes %v", p, train.Len(), train.Classes())
		}
		checkCIFAR(t, train, seq(0, 15), seq(0, 15), func(g int) int { return g % 10 })
		test, err := openCIFAR(p, &spec, Test)
		if err != nil {
			t.Fatal(err)
		}
		checkCIFAR(t, test, seq(0, 3), seq(1000, 3), func(g int) int { return g % 10 })
	}
}

// The official record count through the public API: a full 10,000-record
// test_batch.bin, from the archive.
func TestOpenCIFAR10OfficialTestBatch(t *testing.T) {
	root := t.TempDir()
	files := map[string][]byte{
		"batches.meta.txt": classLines("c", 10),
		"test_batch.bin":   cifarRecords(0, 10000, cifar10Label),
	}
	archive := filepath.Join(root, "cifar-10-binary.tar.gz")
	writeTarGz(t, archive, "cifar-10-batches-bin", files)
	m, err := OpenCIFAR10(archive, Test)
	if err != nil {
		t.Fatal(err)
	}
	if m.Len() != 10000 {
		t.Fatalf("%d records", m.Len())
	}
	some := []int{0, 1, 4999, 9999}
	checkCIFAR(t, m, some, some, func(g int) int { return g % 10 })
	if _, err := OpenCIFAR10(archive, Train); err == nil || !strings.Contains(err.Error(), "missing cifar-10-batches-bin/data_batch_1.bin") {
		t.Errorf("train split from a test-only archive: %v", err)
	}
}

func TestCIFAR100FineAndCoarse(t *testing.T) {
	root := t.TempDir()
	files := map[string][]byte{
		"fine_label_names.txt":   classLines("fine", 100),
		"coarse_label_names.txt": classLines("coarse", 20),
		"train.bin":              cifarRecords(0, 4, cifar100Label),
		"test.bin":               cifarRecords(500, 2, cifar100Label),
	}
	writeTree(t, filepath.Join(root, "cifar-100-binary"), files)
	archive := filepath.Join(root, "cifar-100-binary.tar.gz")
	writeTarGz(t, archive, "cifar-100-binary", files)
	for _, p := range []string{root, archive} {
		fine := smallSpec(cifar100Spec(false), 4)
		m, err := openCIFAR(p, &fine, Train)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Classes()) != 100 || m.Classes()[99] != "fine99" {
			t.Fatalf("fine classes %d", len(m.Classes()))
		}
		checkCIFAR(t, m, seq(0, 4), seq(0, 4), func(g int) int { return (g * 3) % 100 })
		coarse := smallSpec(cifar100Spec(true), 2)
		c, err := openCIFAR(p, &coarse, Test)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Classes()) != 20 {
			t.Fatalf("coarse classes %d", len(c.Classes()))
		}
		checkCIFAR(t, c, seq(0, 2), seq(500, 2), func(g int) int { return g % 20 })
	}
}

func TestCIFARBadInput(t *testing.T) {
	spec := smallSpec(cifar10Spec, 3)
	good := cifarRecords(0, 3, cifar10Label)
	badLabel := append([]byte(nil), good...)
	badLabel[3073] = 10 // record 1's label
	for name, tc := range map[string]struct {
		file string
		data []byte
		want []string
	}{
		"truncated": {"data_batch_2.bin", good[:len(good)-1], []string{"data_batch_2.bin", "truncated", "record 2 is cut at offset 9218"}},
		"short":     {"data_batch_2.bin", good[:3073], []string{"data_batch_2.bin", "truncated: 1 records", "want 3"}},
		"oversize":  {"data_batch_2.bin", append(append([]byte(nil), good...), 0), []string{"data_batch_2.bin", "oversize"}},
		"label":     {"data_batch_4.bin", badLabel, []string{"data_batch_4.bin", "record 1 (offset 3073): label byte 0 = 10 outside [0, 10)"}},
		"meta":      {"batches.meta.txt", []byte("a\nb\n"), []string{"batches.meta.txt", "2 class names, want 10"}},
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			files := writeCIFAR10Tree(t, root, 3)
			files[tc.file] = tc.data
			writeTree(t, filepath.Join(root, "cifar-10-batches-bin"), files)
			archive := filepath.Join(root, "a.tar.gz")
			writeTarGz(t, archive, "cifar-10-batches-bin", files)
			for _, p := range []string{root, archive} {
				_, err := openCIFAR(p, &spec, Train)
				if err == nil {
					t.Fatalf("%s: no error", p)
				}
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("%s: error %q lacks %q", p, err, w)
					}
				}
			}
		})
	}
	// CIFAR-100 fine label 100
	files := map[string][]byte{"fine_label_names.txt": classLines("f", 100), "train.bin": cifarRecords(0, 2, func(g int) []byte { return []byte{1, byte(99 + g)} })}
	root := t.TempDir()
	writeTree(t, filepath.Join(root, "cifar-100-binary"), files)
	fine := smallSpec(cifar100Spec(false), 2)
	if _, err := openCIFAR(root, &fine, Train); err == nil || !strings.Contains(err.Error(), "record 1 (offset 3075): label byte 1 = 100 outside [0, 100)") {
		t.Errorf("fine label 100: %v", err)
	}
}

func TestCIFARBrokenArchives(t *testing.T) {
	root := t.TempDir()
	files := writeCIFAR10Tree(t, root, 3)
	archive := filepath.Join(root, "c.tar.gz")
	writeTarGz(t, archive, "cifar-10-batches-bin", files)
	full, _ := os.ReadFile(archive)
	spec := smallSpec(cifar10Spec, 3)
	cut := filepath.Join(root, "cut.tar.gz")
	os.WriteFile(cut, full[:len(full)/2], 0o644)
	if _, err := openCIFAR(cut, &spec, Train); err == nil || !strings.Contains(err.Error(), "cut.tar.gz") {
		t.Errorf("cut archive: %v", err)
	}
	notGz := filepath.Join(root, "junk.tar.gz")
	os.WriteFile(notGz, []byte("this is not an archive at all, just some text of some length..."), 0o644)
	if _, err := openCIFAR(notGz, &spec, Train); err == nil || !strings.Contains(err.Error(), "junk.tar.gz") {
		t.Errorf("junk archive: %v", err)
	}
	if _, err := OpenCIFAR10(filepath.Join(root, "nothing"), Train); err == nil || !strings.Contains(err.Error(), "nothing") {
		t.Errorf("missing path: %v", err)
	}
	os.Remove(filepath.Join(root, "cifar-10-batches-bin", "data_batch_5.bin"))
	if _, err := openCIFAR(root, &spec, Train); err == nil || !strings.Contains(err.Error(), "data_batch_5.bin") {
		t.Errorf("missing batch file: %v", err)
	}
	if _, err := OpenCIFAR10(root, Split(5)); err == nil {
		t.Error("split 5 accepted")
	}
}
