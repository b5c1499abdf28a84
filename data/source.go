package data

import (
	"fmt"
	"image"
	"os"

	"github.com/vit-train/vit-train/augment"
)

// SourceDataset is a Dataset that can hand out an item before converting
// it to float32, so that the loader converts only the part of it that its
// pipeline reads (the crop of a pipeline that starts with
// RandomResizedCrop; see augment.Source). The batches are the same as
// through Item.
type SourceDataset interface {
	Dataset
	// ItemSource returns item i, decoded but not converted, and its label.
	// The caller calls Release once it has converted what it needs.
	ItemSource(i int) (ItemSource, int, error)
}

// ItemSource is an item of a SourceDataset: Whole(src) is what Item
// returns.
type ItemSource interface {
	augment.Source
	// Release hands back what the source holds; it must not be used
	// afterwards.
	Release()
}

// decodedSource is a decoded image file; Region converts a sub-image.
type decodedSource struct {
	m        image.Image
	channels int // 3: RGB (grey replicated); 1: grey (an *image.Gray)
}

func (s decodedSource) Size() (c, h, w int) {
	r := s.m.Bounds()
	return s.channels, r.Dy(), r.Dx()
}

func (s decodedSource) Region(top, left, h, w int) augment.Image {
	o := s.m.Bounds().Min
	sub := s.m.(interface {
		SubImage(image.Rectangle) image.Image
	}).SubImage(image.Rect(o.X+left, o.Y+top, o.X+left+w, o.Y+top+h))
	if s.channels == 1 {
		return greyPlane(sub.(*image.Gray))
	}
	return toRGB(sub)
}

func (decodedSource) Release() {}

// newDecodedSource wraps a decoded image of a data set of channels 1 or 3;
// a grey data set takes grey images only. name is used in messages.
func newDecodedSource(m image.Image, channels int, name string) (decodedSource, error) {
	if _, ok := m.(interface {
		SubImage(image.Rectangle) image.Image
	}); !ok {
		return decodedSource{}, fmt.Errorf("data: %s: a %T image cannot be cropped", name, m)
	}
	if _, grey := m.(*image.Gray); channels == 1 && !grey {
		return decodedSource{}, fmt.Errorf("data: %s: a %T image in a grey data set", name, m)
	}
	return decodedSource{m: m, channels: channels}, nil
}

// greyPlane converts a grey image to a (1, H, W) float image.
func greyPlane(g *image.Gray) augment.Image {
	w, h := g.Rect.Dx(), g.Rect.Dy()
	img := augment.NewImage(1, h, w)
	for y := range h {
		for x, v := range g.Pix[y*g.Stride : y*g.Stride+w] {
			img.Pix[y*w+x] = augment.ByteValue(v)
		}
	}
	return img
}

// rawSource is a planar (C, H, W) uint8 image; Region converts a part.
type rawSource struct {
	c, h, w int
	pix     []byte
	release func()
}

func (s rawSource) Size() (c, h, w int) { return s.c, s.h, s.w }

func (s rawSource) Region(top, left, h, w int) augment.Image {
	img := augment.NewImage(s.c, h, w)
	for c := range s.c {
		for y := range h {
			row := s.pix[(c*s.h+top+y)*s.w+left:][:w]
			dst := img.Pix[(c*h+y)*w:][:w]
			for x, v := range row {
				dst[x] = augment.ByteValue(v)
			}
		}
	}
	return img
}

// MaxReduction is 1: raw bytes are read at full size.
func (s rawSource) MaxReduction() int { return 1 }

func (s rawSource) ReducedSize(int) (h, w int) { return s.h, s.w }

func (s rawSource) RegionBytes(dst []byte, top, left, h, w, _ int) {
	for c := range s.c {
		for y := range h {
			copy(dst[(c*h+y)*w:][:w], s.pix[(c*s.h+top+y)*s.w+left:][:w])
		}
	}
}

// Planes returns the (C, H, W) bytes, which augment resamples in place.
func (s rawSource) Planes() []byte { return s.pix }

func (s rawSource) Release() {
	if s.release != nil {
		s.release()
	}
}

// floatSource is an image already converted.
type floatSource struct{ img augment.Image }

func (s floatSource) Size() (c, h, w int) { return s.img.C, s.img.H, s.img.W }

func (s floatSource) Region(top, left, h, w int) augment.Image {
	img := augment.NewImage(s.img.C, h, w)
	for c := range s.img.C {
		for y := range h {
			copy(img.Pix[(c*h+y)*w:][:w], s.img.Pix[(c*s.img.H+top+y)*s.img.W+left:][:w])
		}
	}
	return img
}

func (s floatSource) Release() { augment.Recycle(s.img) }

// ItemSource decodes file i without converting it. With SkipCorrupt it is
// Item's image (a corrupt file is replaced as Item replaces it).
func (f *ImageFolder) ItemSource(i int) (ItemSource, int, error) {
	if f.opt.SkipCorrupt || i < 0 || i >= len(f.Files) {
		img, label, err := f.Item(i)
		if err != nil {
			return nil, 0, err
		}
		return floatSource{img}, label, nil
	}
	b, err := os.ReadFile(f.Files[i])
	if err != nil {
		return nil, 0, fmt.Errorf("item %d: data: %w", i, err)
	}
	src, err := decodeSource(b, f.Files[i], f.opt.MaxPixels, 3)
	if err != nil {
		return nil, 0, fmt.Errorf("item %d: %w", i, err)
	}
	return src, f.Labels[i], nil
}
