package data

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/augment"
)

func pngBytes(t *testing.T, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func jpegBytes(t *testing.T, img image.Image, q int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: q}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// patternRGBA is a w x h image whose pixel (x, y) is (x*9, y*13, x+y, 200).
func patternRGBA(w, h int) *image.NRGBA {
	m := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			m.SetNRGBA(x, y, color.NRGBA{uint8(x * 9), uint8(y * 13), uint8(x + y), 200})
		}
	}
	return m
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkPixels compares a decoded image with want(x, y) as 8-bit RGB.
func checkPixels(t *testing.T, name string, img augment.Image, want func(x, y int) [3]uint8) {
	t.Helper()
	for c := 0; c < 3; c++ {
		for y := 0; y < img.H; y++ {
			for x := 0; x < img.W; x++ {
				w := float32(want(x, y)[c]) / 255
				if v := img.Pix[(c*img.H+y)*img.W+x]; v != w {
					t.Fatalf("%s: pixel (%d,%d,%d) = %v, want %v", name, c, y, x, v, w)
				}
			}
		}
	}
}

func TestImageFolderLayoutAndOrder(t *testing.T) {
	root := t.TempDir()
	rgb := pngBytes(t, patternRGBA(5, 4))
	writeFile(t, filepath.Join(root, "train", "dog", "x.jpg"), jpegBytes(t, patternRGBA(6, 6), 90))
	writeFile(t, filepath.Join(root, "train", "cat", "b.png"), rgb)
	writeFile(t, filepath.Join(root, "train", "cat", "a.JPEG"), jpegBytes(t, patternRGBA(8, 8), 90))
	writeFile(t, filepath.Join(root, "train", "cat", "sub", "c.png"), rgb)
	writeFile(t, filepath.Join(root, "train", "cat", "notes.txt"), []byte("not an image"))
	writeFile(t, filepath.Join(root, "train", "cat", ".DS_Store"), []byte("folder settings"))
	writeFile(t, filepath.Join(root, "train", "cat", "sub", "e.WEBP"), []byte("RIFF"))
	writeFile(t, filepath.Join(root, "train", "cat", "d.tif"), []byte("II*"))
	writeFile(t, filepath.Join(root, "train", "dog", "y.heic"), []byte("ftyp"))
	writeFile(t, filepath.Join(root, "train", "README"), []byte("a file next to the classes"))
	f, err := OpenImageFolderSplit(root, Train, FolderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.Classes(), ","); got != "cat,dog" {
		t.Errorf("classes %s", got)
	}
	var rel []string
	for _, p := range f.Files {
		r, _ := filepath.Rel(root, p)
		rel = append(rel, r)
	}
	want := "train/cat/a.JPEG train/cat/b.png train/cat/sub/c.png train/dog/x.jpg"
	if got := strings.Join(rel, " "); got != want || len(f.Labels) != 4 || f.Labels[2] != 0 || f.Labels[3] != 1 {
		t.Errorf("files %s labels %v\nwant %s", got, f.Labels, want)
	}
	// Image files of other formats are listed, in the same order; other
	// files are not.
	rel = rel[:0]
	for _, p := range f.Unread {
		r, _ := filepath.Rel(root, p)
		rel = append(rel, r)
	}
	want = "train/cat/d.tif train/cat/sub/e.WEBP train/dog/y.heic"
	if got := strings.Join(rel, " "); got != want {
		t.Errorf("unread %s\nwant %s", got, want)
	}
	if got := CountBySuffix(f.Unread); got != ".heic: 1, .tif: 1, .webp: 1" {
		t.Errorf("CountBySuffix(%v) = %q", f.Unread, got)
	}
	// A suffix that Extensions names is read, not listed.
	g, err := OpenImageFolderSplit(root, Train, FolderOptions{Extensions: []string{".png", ".tif", ".jpg"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Files) != 4 || len(g.Unread) != 2 || !strings.HasSuffix(g.Files[1], "d.tif") {
		t.Errorf("with .tif among Extensions: files %v, unread %v", g.Files, g.Unread)
	}
	img, label, err := f.Item(1)
	if err != nil || label != 0 {
		t.Fatal(label, err)
	}
	checkPixels(t, "png", img, func(x, y int) [3]uint8 { return [3]uint8{uint8(x * 9), uint8(y * 13), uint8(x + y)} })
	if c, h, w := f.Shape(); c != 3 || h != 0 || w != 0 {
		t.Errorf("shape %d %d %d", c, h, w)
	}
}

func TestDecodeImageFormats(t *testing.T) {
	grey := image.NewGray(image.Rect(0, 0, 4, 3))
	for i := range grey.Pix {
		grey.Pix[i] = uint8(i * 20)
	}
	pal := image.NewPaletted(image.Rect(0, 0, 3, 2), color.Palette{color.RGBA{10, 20, 30, 255}, color.RGBA{200, 100, 50, 255}})
	pal.SetColorIndex(1, 1, 1)
	for name, tc := range map[string]struct {
		data []byte
		want func(x, y int) [3]uint8
	}{
		"grey png": {pngBytes(t, grey), func(x, y int) [3]uint8 { v := uint8((y*4 + x) * 20); return [3]uint8{v, v, v} }},
		"rgba png": {pngBytes(t, patternRGBA(7, 5)), func(x, y int) [3]uint8 { return [3]uint8{uint8(x * 9), uint8(y * 13), uint8(x + y)} }},
		"palette png": {pngBytes(t, pal), func(x, y int) [3]uint8 {
			if x == 1 && y == 1 {
				return [3]uint8{200, 100, 50}
			}
			return [3]uint8{10, 20, 30}
		}},
		"grey jpeg": {jpegBytes(t, grey, 100), nil},
	} {
		img, err := DecodeImage(tc.data, name, 0)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if img.C != 3 {
			t.Fatalf("%s: %d channels", name, img.C)
		}
		if tc.want != nil {
			checkPixels(t, name, img, tc.want)
		} else {
			for i := 0; i < img.H*img.W; i++ {
				if img.Pix[i] != img.Pix[img.H*img.W+i] || img.Pix[i] != img.Pix[2*img.H*img.W+i] {
					t.Fatalf("%s: channels differ at %d", name, i)
				}
			}
		}
	}
}

// Every chroma subsampling of Go's JPEG test images converts exactly as
// image/color does; the CMYK JPEG matches its PNG rendering.
func TestDecodeGoJPEGTestdata(t *testing.T) {
	dir := filepath.Join(runtime.GOROOT(), "src", "image", "testdata")
	if _, err := os.Stat(dir); err != nil {
		t.Skip("Go source testdata not available")
	}
	for _, name := range []string{
		"video-001.q50.410.jpeg", "video-001.q50.411.jpeg", "video-001.q50.420.jpeg",
		"video-001.q50.422.jpeg", "video-001.q50.440.jpeg", "video-001.q50.444.jpeg",
		"video-001.progressive.jpeg", "video-005.gray.jpeg", "video-001.cmyk.jpeg",
	} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		img, err := DecodeImage(b, name, 0)
		if err != nil {
			t.Fatal(err)
		}
		ref, _, _ := image.Decode(bytes.NewReader(b))
		checkPixels(t, name, img, func(x, y int) [3]uint8 {
			c := color.NRGBAModel.Convert(ref.At(x, y)).(color.NRGBA)
			return [3]uint8{c.R, c.G, c.B}
		})
	}
	b, _ := os.ReadFile(filepath.Join(dir, "video-001.cmyk.jpeg"))
	cmyk, err := DecodeImage(b, "cmyk", 0)
	if err != nil {
		t.Fatal(err)
	}
	pb, _ := os.ReadFile(filepath.Join(dir, "video-001.cmyk.png"))
	ref, _ := DecodeImage(pb, "cmyk png", 0)
	var worst float32
	for i := range ref.Pix {
		worst = max(worst, abs32(ref.Pix[i]-cmyk.Pix[i]))
	}
	if worst > 8./255 {
		t.Errorf("CMYK JPEG differs from its PNG by up to %v", worst*255)
	}
}

func abs32(v float32) float32 {
	if v < 0 {
		return -v
	}
	return v
}

func TestImageFolderBadInput(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "a", "1.png"), pngBytes(t, patternRGBA(3, 3)))
	os.MkdirAll(filepath.Join(root, "b", "deep"), 0o755)
	writeFile(t, filepath.Join(root, "b", "deep", "x.txt"), []byte("x"))
	if _, err := OpenImageFolder(root, FolderOptions{}); err == nil || !strings.Contains(err.Error(), `class folder "b" holds no image files`) || strings.Contains(err.Error(), "other formats") {
		t.Errorf("empty class: %v", err)
	}
	writeFile(t, filepath.Join(root, "b", "1.webp"), []byte("RIFF"))
	writeFile(t, filepath.Join(root, "b", "deep", "2.webp"), []byte("RIFF"))
	writeFile(t, filepath.Join(root, "b", "3.BMP"), []byte("BM"))
	if _, err := OpenImageFolder(root, FolderOptions{}); err == nil || !strings.Contains(err.Error(), `class folder "b" holds no image files (.jpg, .jpeg, .png); it holds 3 of other formats (.bmp: 1, .webp: 2), which are not read: convert them to JPEG or PNG`) {
		t.Errorf("a class of WebP and BMP files: %v", err)
	}
	if _, err := OpenImageFolder(filepath.Join(root, "a"), FolderOptions{}); err == nil || !strings.Contains(err.Error(), "no class folders") {
		t.Errorf("no classes: %v", err)
	}
	if _, err := OpenImageFolder(filepath.Join(root, "missing"), FolderOptions{}); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing root: %v", err)
	}
	big := pngBytes(t, patternRGBA(40, 30))
	if _, err := DecodeImage(big, "big.png", 1000); err == nil || !strings.Contains(err.Error(), "big.png: png image of 40x30 pixels (limit 1000") {
		t.Errorf("pixel limit: %v", err)
	}
	jp := jpegBytes(t, patternRGBA(64, 64), 90)
	if _, err := DecodeImage(jp[:len(jp)/2], "half.jpg", 0); err == nil || !strings.Contains(err.Error(), "half.jpg") {
		t.Errorf("truncated JPEG: %v", err)
	}
	if _, err := DecodeImage([]byte("GIF89a"), "x.gif", 0); err == nil || !strings.Contains(err.Error(), "x.gif") {
		t.Errorf("unknown format: %v", err)
	}
}

func TestImageFolderSkipCorrupt(t *testing.T) {
	root := t.TempDir()
	good := pngBytes(t, patternRGBA(4, 4))
	writeFile(t, filepath.Join(root, "a", "0.png"), good)
	writeFile(t, filepath.Join(root, "a", "1.png"), good[:30]) // truncated
	writeFile(t, filepath.Join(root, "b", "2.jpg"), []byte("garbage, not a JPEG"))
	writeFile(t, filepath.Join(root, "b", "3.png"), good)

	strict, err := OpenImageFolder(root, FolderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := strict.Item(1); err == nil || !strings.Contains(err.Error(), "1.png") || !strings.Contains(err.Error(), "item 1") {
		t.Errorf("corrupt file error: %v", err)
	}

	f, _ := OpenImageFolder(root, FolderOptions{SkipCorrupt: true})
	for i, wantLabel := range []int{0, 1, 1, 1} { // 1 and 2 fall through to 3
		img, l, err := f.Item(i)
		if err != nil || l != wantLabel || img.W != 4 {
			t.Errorf("item %d: label %d (want %d), err %v", i, l, wantLabel, err)
		}
	}
	sk := f.Skipped()
	if len(sk) != 2 || !strings.HasSuffix(sk[0].Path, "1.png") || !strings.HasSuffix(sk[1].Path, "2.jpg") {
		t.Fatalf("skipped %v", sk)
	}
	if r := f.SkipReport(); !strings.Contains(r, "2 of 4 files") || !strings.Contains(r, "2.jpg") {
		t.Errorf("report %q", r)
	}
}

// TestSplitFolder checks the order in which a split's folder names are
// tried, in any case, that files and other folders are passed over, and
// the error when none is there.
func TestSplitFolder(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"TRAIN", "test", "Valid", "eval", "other"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(root, "val"), []byte("a file, not a folder"))
	for _, c := range []struct {
		split Split
		want  string
	}{{Train, "TRAIN"}, {Test, "Valid"}} {
		got, err := SplitFolder(root, c.split)
		if err != nil || got != filepath.Join(root, c.want) {
			t.Errorf("%s split: %s, %v; want %s", c.split, got, err, c.want)
		}
	}
	for _, c := range []struct{ remove, want string }{{"Valid", "eval"}, {"eval", "test"}} {
		if err := os.Remove(filepath.Join(root, c.remove)); err != nil {
			t.Fatal(err)
		}
		if got, err := SplitFolder(root, Test); err != nil || got != filepath.Join(root, c.want) {
			t.Errorf("test split without %s/: %s, %v; want %s", c.remove, got, err, c.want)
		}
	}
	_, err := SplitFolder(filepath.Join(root, "other"), Train)
	var missing *MissingSplitError
	if !errors.As(err, &missing) || missing.Split != Train || err.Error() != "data: image folder "+filepath.Join(root, "other")+": no folder for the train split (train/ or training/)" {
		t.Errorf("no train folder: %v", err)
	}
	if _, err := OpenImageFolderSplit(filepath.Join(root, "other"), Test, FolderOptions{}); !errors.As(err, &missing) || missing.Tried() != "val/, valid/, validation/, eval/, evaluation/ or test/" {
		t.Errorf("no test folder: %v", err)
	}
}

// TestLabelBy checks that LabelBy labels files by their class's index in
// the list given, and that a class the list lacks is an error that
// leaves the folder as it was.
func TestLabelBy(t *testing.T) {
	root := t.TempDir()
	for _, p := range []string{"b/1.png", "b/2.png", "d/1.png"} {
		writeFile(t, filepath.Join(root, p), pngBytes(t, patternRGBA(2, 2)))
	}
	f, err := OpenImageFolder(root, FolderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.LabelBy([]string{"a", "b", "c"}); err == nil || !strings.Contains(err.Error(), `class folders ["d"] are not among the 3 classes`) {
		t.Errorf("a class the list lacks: %v", err)
	}
	if !slices.Equal(f.Classes(), []string{"b", "d"}) || !slices.Equal(f.Labels, []int{0, 0, 1}) {
		t.Errorf("after a refused LabelBy: classes %q, labels %v", f.Classes(), f.Labels)
	}
	if err := f.LabelBy([]string{"a", "b", "c", "d"}); err != nil {
		t.Fatal(err)
	}
	if _, label, err := f.Item(2); err != nil || label != 3 || !slices.Equal(f.Classes(), []string{"a", "b", "c", "d"}) || !slices.Equal(f.Labels, []int{1, 1, 3}) {
		t.Errorf("labelled by a, b, c, d: item 2's label %d (%v), classes %q, labels %v", label, err, f.Classes(), f.Labels)
	}
}
