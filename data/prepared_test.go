package data

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/augment"
	"github.com/vit-train/vit-train/formats/imageshard"
)

// prepare writes ds into dir/<split>.shard and opens it.
func prepare(t *testing.T, dir string, ds Dataset, opt PrepareOptions) *Prepared {
	t.Helper()
	path := filepath.Join(dir, opt.Split.String()+PreparedExt)
	if err := WritePrepared(path, ds, opt); err != nil {
		t.Fatal(err)
	}
	p, err := OpenPrepared(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// Raw items come back bit for bit, with their labels, classes and shape.
func TestPreparedRawRoundTrip(t *testing.T) {
	src := indexDataset(30, 3, 5, 7)
	p := prepare(t, t.TempDir(), src, PrepareOptions{Source: "cifar10", Encoding: imageshard.Raw})
	if c, h, w := p.Shape(); c != 3 || h != 5 || w != 7 || p.Len() != 30 || p.Source() != "cifar10" {
		t.Fatalf("shape (%d, %d, %d), %d items, source %q", c, h, w, p.Len(), p.Source())
	}
	if fmt.Sprint(p.Classes()) != fmt.Sprint(src.Classes()) {
		t.Errorf("classes %v, want %v", p.Classes(), src.Classes())
	}
	for i := range src.Len() {
		want, wl, _ := src.Item(i)
		got, gl, err := p.Item(i)
		if err != nil {
			t.Fatal(err)
		}
		if gl != wl || fmt.Sprint(got.Pix) != fmt.Sprint(want.Pix) {
			t.Fatalf("item %d: label %d, want %d, or pixels differ", i, gl, wl)
		}
	}
}

// Grey images stay grey in JPEG, within JPEG's error at quality 100.
func TestPreparedGreyJPEG(t *testing.T) {
	src := indexDataset(4, 1, 16, 16)
	p := prepare(t, t.TempDir(), src, PrepareOptions{Source: "mnist", Split: Test, Encoding: imageshard.JPEG, Quality: 100})
	if c, h, w := p.Shape(); c != 1 || h != 16 || w != 16 {
		t.Fatalf("shape (%d, %d, %d)", c, h, w)
	}
	for i := range src.Len() {
		want, _, _ := src.Item(i)
		got, _, err := p.Item(i)
		if err != nil {
			t.Fatal(err)
		}
		if d := maxDiff(got.Pix, want.Pix); d > 2.0/255 {
			t.Errorf("item %d: differs by %.4f", i, d)
		}
	}
}

func maxDiff(a, b []float32) float64 {
	d := 0.0
	for k := range a {
		d = max(d, math.Abs(float64(a[k]-b[k])))
	}
	return d
}

// Images longer than MaxSide are resized as augment.ResizeTo (bicubic)
// does, aspect ratio kept; smaller ones are stored as they are.
func TestPreparedMaxSide(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "src", "a", "wide.png"), encodePNG(patternRGBA(40, 10)))
	writeFile(t, filepath.Join(dir, "src", "b", "small.png"), encodePNG(patternRGBA(6, 9)))
	src, err := OpenImageFolder(filepath.Join(dir, "src"), FolderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := prepare(t, dir, src, PrepareOptions{Source: "imagefolder", MaxSide: 16, Encoding: imageshard.Raw, Workers: 2})
	if c, h, w := p.Shape(); c != 3 || h != 0 || w != 0 {
		t.Errorf("shape (%d, %d, %d), want (3, 0, 0)", c, h, w)
	}
	wide, _, _ := src.Item(0)
	want := augment.ResizeTo{H: 4, W: 16, Interp: augment.Bicubic}.Apply(wide, nil)
	got, label, err := p.Item(0)
	if err != nil {
		t.Fatal(err)
	}
	if got.H != 4 || got.W != 16 || label != 0 {
		t.Fatalf("item 0: %d × %d, label %d; want 4 × 16, label 0", got.H, got.W, label)
	}
	if d := maxDiff(got.Pix, want.Pix); d > 0.5/255+1e-6 {
		t.Errorf("item 0 differs from the bicubic resize by %.5f, more than rounding", d)
	}
	small, _, _ := src.Item(1)
	got, label, _ = p.Item(1)
	if got.H != 9 || got.W != 6 || label != 1 || fmt.Sprint(got.Pix) != fmt.Sprint(small.Pix) {
		t.Errorf("item 1: %d × %d, label %d, or pixels changed", got.H, got.W, label)
	}
}

func TestFitSide(t *testing.T) {
	for _, c := range []struct{ h, w, max, wh, ww int }{
		{375, 500, 256, 192, 256}, {500, 375, 256, 256, 192}, {10, 10, 0, 10, 10}, {3, 1000, 100, 1, 100}, {8, 8, 8, 8, 8},
	} {
		if h, w := fitSide(c.h, c.w, c.max); h != c.wh || w != c.ww {
			t.Errorf("fitSide(%d, %d, %d) = (%d, %d), want (%d, %d)", c.h, c.w, c.max, h, w, c.wh, c.ww)
		}
	}
}

// A prepared set loads exactly as its source: the same shuffled, sharded,
// repeated-augmentation batches, from any starting batch (resume).
func TestPreparedLoadsAsSource(t *testing.T) {
	src := indexDataset(300, 3, 6, 6)
	p := prepare(t, t.TempDir(), src, PrepareOptions{Source: "cifar10", Encoding: imageshard.Raw})
	pipe := augment.Pipeline{Transform: augment.RandomCrop{H: 6, W: 6, Padding: 2}, Mean: []float32{0.5, 0.5, 0.5}, Std: []float32{0.2, 0.2, 0.2}}
	for _, cfg := range []LoaderConfig{
		{BatchSize: 16, Shuffle: true, Seed: 3, Workers: 2},
		{BatchSize: 8, Shuffle: true, Seed: 4, Workers: 3, Rank: 1, Replicas: 3},
		{BatchSize: 8, Shuffle: true, Seed: 5, Workers: 2, Rank: 0, Replicas: 2, RepeatedAug: 3},
	} {
		cfg.Pipeline = pipe
		var got [2][][]float32
		for k, ds := range []Dataset{src, p} {
			cfg.Dataset = ds
			l, err := NewLoader(cfg)
			if err != nil {
				t.Fatal(err)
			}
			got[k], _, _ = collect(t, l, 2, 3)
		}
		if len(got[0]) == 0 || fmt.Sprint(got[0]) != fmt.Sprint(got[1]) {
			t.Errorf("%+v: the prepared set's batches differ from its source's", cfg)
		}
	}
}

// A corrupt item fails with an error naming the file and the item.
func TestPreparedCorruptItem(t *testing.T) {
	dir := t.TempDir()
	src := indexDataset(5, 1, 4, 4)
	prepare(t, dir, src, PrepareOptions{Source: "mnist", Encoding: imageshard.Raw})
	path := filepath.Join(dir, "train.shard")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[16+3*16+5] ^= 0x40 // item 3: after the 16-byte header, 16 bytes an item
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := OpenPrepared(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, _, err := p.Item(2); err != nil {
		t.Errorf("item 2: %v", err)
	}
	_, _, err = p.Item(3)
	if err == nil || !strings.Contains(err.Error(), path+": item 3: CRC-32C") {
		t.Errorf("item 3: %v, want a CRC-32C error naming %s and item 3", err, path)
	}
}

// OpenPreparedSplit finds each split's file and refuses a file holding
// another split.
func TestOpenPreparedSplit(t *testing.T) {
	dir := t.TempDir()
	prepare(t, dir, indexDataset(3, 1, 2, 2), PrepareOptions{Source: "mnist", Split: Test, Encoding: imageshard.Raw})
	p, err := OpenPreparedSplit(dir, Test)
	if err != nil {
		t.Fatal(err)
	}
	p.Close()
	if _, err := OpenPreparedSplit(dir, Train); err == nil || !strings.Contains(err.Error(), "train.shard") {
		t.Errorf("missing train split: %v", err)
	}
	if err := os.Rename(filepath.Join(dir, "test.shard"), filepath.Join(dir, "train.shard")); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenPreparedSplit(dir, Train); err == nil || !strings.Contains(err.Error(), `split = "test", want "train"`) {
		t.Errorf("a test file named train.shard: %v", err)
	}
}

func TestPrepareOptionsChecked(t *testing.T) {
	src := indexDataset(2, 3, 2, 2)
	for _, c := range []struct {
		opt  PrepareOptions
		want string
	}{
		{PrepareOptions{Encoding: imageshard.JPEG}, "JPEG quality 0"},
		{PrepareOptions{Encoding: imageshard.Raw, Quality: 90}, "no effect on raw"},
		{PrepareOptions{Encoding: imageshard.Raw, MaxSide: -1}, "max side -1"},
		{PrepareOptions{}, "encoding"},
	} {
		err := WritePrepared(filepath.Join(t.TempDir(), "x.shard"), src, c.opt)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.opt, err, c.want)
		}
	}
}

// JPEG files that fit MaxSide are stored as they are, and read back as the
// folder reads them; larger JPEGs and other files are encoded.
func TestPreparedKeepsFittingJPEGs(t *testing.T) {
	dir := t.TempDir()
	files := map[string][]byte{
		"a/big.jpg":   encodeJPEGQ(patternRGBA(40, 30), 80),
		"a/small.jpg": encodeJPEGQ(patternRGBA(20, 30), 80),
		"b/tiny.png":  encodePNG(patternRGBA(10, 10)),
	}
	for name, b := range files {
		writeFile(t, filepath.Join(dir, "src", name), b)
	}
	src, err := OpenImageFolder(filepath.Join(dir, "src"), FolderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := prepare(t, dir, src, PrepareOptions{Source: "imagefolder", MaxSide: 32, Encoding: imageshard.JPEG, Quality: 90})
	r, err := imageshard.Open(filepath.Join(dir, "train.shard"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for i, name := range []string{"a/big.jpg", "a/small.jpg", "b/tiny.png"} {
		b, err := r.Read(i, nil)
		if err != nil {
			t.Fatal(err)
		}
		rec := r.Record(i)
		kept := bytes.Equal(b, files[name])
		if kept != (name == "a/small.jpg") {
			t.Errorf("%s: stored as it is: %v", name, kept)
		}
		if !bytes.HasPrefix(b, []byte{0xff, 0xd8}) || max(rec.Height, rec.Width) > 32 {
			t.Errorf("%s: a %d × %d item that is not a JPEG of at most 32 px", name, rec.Height, rec.Width)
		}
	}
	want, _, _ := src.Item(1)
	got, _, err := p.Item(1)
	if err != nil || !slices.Equal(got.Pix, want.Pix) {
		t.Errorf("the JPEG stored as it is reads back differently (%v)", err)
	}
}
