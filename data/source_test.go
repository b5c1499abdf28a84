package data

import (
	"fmt"
	"image"
	"image/color/palette"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/vit-train/vit-train/augment"
	"github.com/vit-train/vit-train/formats/imageshard"
)

// cropOf cuts the (h, w) region at (top, left) out of img.
func cropOf(img augment.Image, top, left, h, w int) []float32 {
	var out []float32
	for c := range img.C {
		for y := range h {
			out = append(out, img.Pix[(c*img.H+top+y)*img.W+left:][:w]...)
		}
	}
	return out
}

// checkRegions compares random regions of src, odd offsets included,
// with the same regions of want.
func checkRegions(t *testing.T, name string, src augment.Source, want augment.Image) {
	t.Helper()
	c, h, w := src.Size()
	if c != want.C || h != want.H || w != want.W {
		t.Fatalf("%s: size (%d, %d, %d), want (%d, %d, %d)", name, c, h, w, want.C, want.H, want.W)
	}
	if got := augment.Whole(src); !slices.Equal(got.Pix, want.Pix) {
		t.Fatalf("%s: the whole source differs from Item's image", name)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		rh, rw := 1+rng.IntN(h), 1+rng.IntN(w)
		top, left := rng.IntN(h-rh+1), rng.IntN(w-rw+1)
		if got := src.Region(top, left, rh, rw); !slices.Equal(got.Pix, cropOf(want, top, left, rh, rw)) {
			t.Fatalf("%s: region (%d, %d) of %d × %d differs from the crop of the whole image", name, top, left, rh, rw)
		}
	}
}

// A decoded image's regions are the crops of its whole conversion, for
// every JPEG subsampling, grey, CMYK, progressive JPEGs and PNG types.
func TestDecodedSourceRegions(t *testing.T) {
	var images []image.Image
	var names []string
	dir := filepath.Join(runtime.GOROOT(), "src", "image", "testdata")
	for _, name := range []string{
		"video-001.q50.410.jpeg", "video-001.q50.411.jpeg", "video-001.q50.420.jpeg",
		"video-001.q50.422.jpeg", "video-001.q50.440.jpeg", "video-001.q50.444.jpeg",
		"video-001.progressive.jpeg", "video-005.gray.jpeg", "video-001.cmyk.jpeg",
	} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue // Go's source testdata not available
		}
		m, err := decodeFile(b, name, 0)
		if err != nil {
			t.Fatal(err)
		}
		images, names = append(images, m), append(names, name)
	}
	pal := image.NewPaletted(image.Rect(0, 0, 9, 7), palette.Plan9)
	g16 := image.NewGray16(image.Rect(0, 0, 5, 8))
	for k := range pal.Pix {
		pal.Pix[k] = uint8(k * 7)
	}
	for k := range g16.Pix {
		g16.Pix[k] = uint8(k * 13)
	}
	for _, m := range []image.Image{patternRGBA(13, 11), pal, g16, decodeJPEGBytes(t, encodeJPEGQ(patternRGBA(33, 17), 90))} {
		images, names = append(images, m), append(names, fmt.Sprintf("%T", m))
	}
	for k, m := range images {
		src, err := newDecodedSource(m, 3, names[k])
		if err != nil {
			t.Fatal(err)
		}
		checkRegions(t, names[k], src, toRGB(m))
	}
}

func decodeJPEGBytes(t *testing.T, b []byte) image.Image {
	t.Helper()
	m, err := decodeFile(b, "test", 0)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// ItemSource gives Item's image for image folders and prepared sets (raw,
// JPEG, grey JPEG), and the loader's batches through it are those through
// Item.
func TestItemSources(t *testing.T) {
	dir := t.TempDir()
	for k, m := range []image.Image{patternRGBA(40, 30), patternRGBA(25, 60), image.NewGray(image.Rect(0, 0, 31, 29))} {
		writeFile(t, filepath.Join(dir, "src", fmt.Sprint("c", k%2), fmt.Sprint(k, ".jpg")), encodeJPEGQ(m, 85))
	}
	folder, err := OpenImageFolder(filepath.Join(dir, "src"), FolderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	grey := indexDataset(3, 1, 20, 24)
	for k := range grey.Pix {
		grey.Pix[k] = uint8(k * 7)
	}
	sets := map[string]SourceDataset{
		"folder":       folder,
		"raw":          prepare(t, t.TempDir(), folder, PrepareOptions{Source: "imagefolder", Encoding: imageshard.Raw}),
		"jpeg":         prepare(t, t.TempDir(), folder, PrepareOptions{Source: "imagefolder", Encoding: imageshard.JPEG, Quality: 90}),
		"grey jpeg":    prepare(t, t.TempDir(), grey, PrepareOptions{Source: "mnist", Encoding: imageshard.JPEG, Quality: 90}),
		"skip corrupt": must(OpenImageFolder(filepath.Join(dir, "src"), FolderOptions{SkipCorrupt: true})),
	}
	for name, ds := range sets {
		for i := range ds.Len() {
			want, wl, err := ds.Item(i)
			if err != nil {
				t.Fatal(err)
			}
			src, label, err := ds.ItemSource(i)
			if err != nil {
				t.Fatal(err)
			}
			if label != wl {
				t.Errorf("%s item %d: label %d, want %d", name, i, label, wl)
			}
			checkRegions(t, fmt.Sprint(name, " item ", i), src, want)
			src.Release()
		}
		mean, std := ImageNetMeanStd()
		c, _, _ := ds.Shape()
		p, err := augment.TrainPipeline(augment.TrainConfig{Size: 16, HFlip: 0.5, Interp: augment.Bicubic, Mean: mean[:c], Std: std[:c]})
		if err != nil {
			t.Fatal(err)
		}
		var got [2][][]float32
		for k, d := range []Dataset{ds, itemsOnly{ds}} {
			l, err := NewLoader(LoaderConfig{Dataset: d, BatchSize: 2, Shuffle: true, Seed: 4, Workers: 2, Pipeline: p})
			if err != nil {
				t.Fatal(err)
			}
			got[k], _, _ = collect(t, l, 1, 0)
		}
		if fmt.Sprint(got[0]) != fmt.Sprint(got[1]) {
			t.Errorf("%s: the loader's batches through ItemSource differ from those through Item", name)
		}
	}
}

// itemsOnly hides a data set's ItemSource.
type itemsOnly struct{ Dataset }

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
