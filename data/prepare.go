package data

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
	"math"
	"os"
	"runtime"
	"sync"

	"github.com/vit-train/vit-train/augment"
	"github.com/vit-train/vit-train/formats/imageshard"
)

// PrepareOptions configures WritePrepared.
type PrepareOptions struct {
	// Source names the data set as train's data.dataset does (imagefolder,
	// cifar10, …); the prepared set takes its normalisation from it. A
	// *Prepared data set passes on its own.
	Source string
	// Split is the split the data set is.
	Split Split
	// MaxSide bounds the longer side of the stored images: larger images
	// are resized (PIL's antialiased bicubic, aspect ratio kept) so that it
	// is MaxSide; 0 keeps every size.
	MaxSide int
	// Encoding stores the images as JPEG (smaller, decoded at each read) or
	// raw uint8 (C·H·W bytes, no decoding).
	Encoding imageshard.Encoding
	// Quality is the JPEG quality, 1…100 (JPEG only), of the images
	// encoded: an image folder's JPEG files that fit MaxSide are stored as
	// they are, without decoding and encoding them again.
	Quality int
	// Workers decode, resize and encode items in parallel; 0: GOMAXPROCS.
	Workers int
	// Progress, when set, is called after each chunk of items with the
	// number written so far.
	Progress func(done, total int)
}

func (o PrepareOptions) check() error {
	switch {
	case o.MaxSide < 0 || o.MaxSide > imageshard.MaxSide:
		return fmt.Errorf("max side %d: want 0 (keep) to %d", o.MaxSide, imageshard.MaxSide)
	case o.Encoding != imageshard.Raw && o.Encoding != imageshard.JPEG:
		return fmt.Errorf("encoding %v: want raw or jpeg", o.Encoding)
	case o.Encoding == imageshard.JPEG && (o.Quality < 1 || o.Quality > 100):
		return fmt.Errorf("JPEG quality %d: want 1…100", o.Quality)
	case o.Encoding == imageshard.Raw && o.Quality != 0:
		return fmt.Errorf("JPEG quality %d has no effect on raw images", o.Quality)
	case o.Workers < 0:
		return fmt.Errorf("%d workers", o.Workers)
	}
	return o.Split.check()
}

// WritePrepared writes ds into a prepared file at path (formats/imageshard),
// atomically: each image is read, resized so that its longer side is at
// most opt.MaxSide, and stored as opt.Encoding. Items keep their indices
// and labels.
func WritePrepared(path string, ds Dataset, opt PrepareOptions) error {
	if err := opt.check(); err != nil {
		return fmt.Errorf("data: prepare %s: %w", path, err)
	}
	if opt.Workers == 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	c, _, _ := ds.Shape()
	if p, ok := ds.(*Prepared); ok {
		opt.Source = p.Source()
	}
	meta := imageshard.Meta{Source: opt.Source, Split: opt.Split.String(), Channels: c, Classes: ds.Classes(), MaxSide: opt.MaxSide, Quality: opt.Quality}
	return imageshard.WriteFile(path, meta, func(w *imageshard.Writer) error {
		return encodeItems(ds, opt, func(e encodedItem) error {
			return w.Add(e.data, e.label, e.h, e.w, opt.Encoding)
		})
	})
}

// encodedItem is an item as WritePrepared stores it.
type encodedItem struct {
	data        []byte
	label, h, w int
}

// encodeItems encodes ds's items on opt.Workers goroutines, a chunk at a
// time, and hands them to add in index order.
func encodeItems(ds Dataset, opt PrepareOptions, add func(encodedItem) error) error {
	n := ds.Len()
	chunk := make([]encodedItem, opt.Workers*16)
	errs := make([]error, len(chunk))
	for start := 0; start < n; start += len(chunk) {
		m := min(len(chunk), n-start)
		var wg sync.WaitGroup
		for wk := range opt.Workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := wk; k < m; k += opt.Workers {
					chunk[k], errs[k] = encodeItem(ds, start+k, opt)
				}
			}()
		}
		wg.Wait()
		for k := range m {
			if errs[k] != nil {
				return errs[k]
			}
			if err := add(chunk[k]); err != nil {
				return err
			}
		}
		if opt.Progress != nil {
			opt.Progress(start+m, n)
		}
	}
	return nil
}

// encodeItem reads item i, resizes it and encodes it; a JPEG file stored
// as it is (see readItem) is neither.
func encodeItem(ds Dataset, i int, opt PrepareOptions) (encodedItem, error) {
	img, label, file, err := readItem(ds, i, opt)
	if err != nil {
		return encodedItem{}, err
	}
	if file != nil {
		return encodedItem{data: file, label: label, h: img.H, w: img.W}, nil
	}
	if h, w := fitSide(img.H, img.W, opt.MaxSide); h != img.H || w != img.W {
		img = augment.ResizeTo{H: h, W: w, Interp: augment.Bicubic}.Apply(img, nil)
	}
	pix := quantise(img)
	augment.Recycle(img)
	e := encodedItem{data: pix, label: label, h: img.H, w: img.W}
	if opt.Encoding == imageshard.JPEG {
		if e.data, err = encodePlanarJPEG(pix, img.C, img.H, img.W, opt.Quality); err != nil {
			return encodedItem{}, fmt.Errorf("data: item %d: %w", i, err)
		}
	}
	return e, nil
}

// readItem returns item i decoded and its label, or, when storing JPEGs,
// for an image folder's JPEG file whose longer side is at most MaxSide,
// the file's bytes as they are (once they have decoded) with an image that
// gives only the size.
func readItem(ds Dataset, i int, opt PrepareOptions) (img augment.Image, label int, file []byte, err error) {
	f, ok := ds.(*ImageFolder)
	if !ok || f.opt.SkipCorrupt {
		img, label, err = ds.Item(i)
		return img, label, nil, err
	}
	b, err := os.ReadFile(f.Files[i])
	if err != nil {
		return img, 0, nil, fmt.Errorf("item %d: data: %w", i, err)
	}
	src, err := decodeSource(b, f.Files[i], f.opt.MaxPixels, 3)
	if err != nil {
		return img, 0, nil, fmt.Errorf("item %d: %w", i, err)
	}
	defer src.Release()
	_, h, w := src.Size()
	if opt.Encoding == imageshard.JPEG && isJPEG(b) && (opt.MaxSide == 0 || max(h, w) <= opt.MaxSide) {
		return augment.Image{C: 3, H: h, W: w}, f.Labels[i], b, nil
	}
	return augment.Whole(src), f.Labels[i], nil, nil
}

// fitSide returns the size (h, w) scaled so that its longer side is at
// most maxSide (0: no bound), the shorter one rounded and at least 1.
func fitSide(h, w, maxSide int) (int, int) {
	long := max(h, w)
	if maxSide == 0 || long <= maxSide {
		return h, w
	}
	scale := func(v int) int { return max(1, int(math.Round(float64(v)*float64(maxSide)/float64(long)))) }
	return scale(h), scale(w)
}

// quantise returns img's values as bytes, planar (C, H, W): round(v·255),
// clamped to [0, 255], as PIL stores a resampled image.
func quantise(img augment.Image) []byte {
	out := make([]byte, len(img.Pix))
	for k, v := range img.Pix {
		out[k] = uint8(min(max(math.Round(float64(v)*255), 0), 255))
	}
	return out
}

// encodePlanarJPEG encodes planar (c, h, w) bytes, c 1 (grey) or 3 (RGB).
func encodePlanarJPEG(pix []byte, c, h, w, quality int) ([]byte, error) {
	var m image.Image
	switch c {
	case 1:
		m = &image.Gray{Pix: pix, Stride: w, Rect: image.Rect(0, 0, w, h)}
	case 3:
		rgba := image.NewRGBA(image.Rect(0, 0, w, h))
		n := h * w
		for k := range n {
			rgba.Pix[4*k], rgba.Pix[4*k+1], rgba.Pix[4*k+2], rgba.Pix[4*k+3] = pix[k], pix[n+k], pix[2*n+k], 255
		}
		m = rgba
	default:
		return nil, fmt.Errorf("%d channels: JPEG holds 1 or 3; use raw", c)
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, m, &jpeg.Options{Quality: quality}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
