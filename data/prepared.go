package data

import (
	"fmt"
	"path/filepath"
	"sync"

	"github.com/vit-train/vit-train/augment"
	"github.com/vit-train/vit-train/formats/imageshard"
	"github.com/vit-train/vit-train/formats/jpeg"
)

// PreparedExt is the file suffix of a prepared split: a prepared data set
// is the folder holding train.shard and test.shard.
const PreparedExt = ".shard"

// PreparedFile is the name of split's file in a prepared data set's
// folder: train.shard or test.shard.
func PreparedFile(split Split) string { return split.String() + PreparedExt }

// Prepared is a data set read from a prepared file (formats/imageshard):
// images already resized and encoded once, each read from the file's
// memory mapping (or with one ReadAt where it has none) and checked
// against its CRC-32C. Items are decoded to (C, H, W) images with
// values in [0, 1], C being the file's channel count.
type Prepared struct {
	r       *imageshard.Reader
	c, h, w int       // h, w: 0 when images differ in size
	bufs    sync.Pool // *[]byte for items' bytes
}

// OpenPreparedSplit opens root/train.shard (split Train) or
// root/test.shard (split Test), checking that it holds that split.
func OpenPreparedSplit(root string, split Split) (*Prepared, error) {
	if err := split.check(); err != nil {
		return nil, err
	}
	p, err := OpenPrepared(filepath.Join(root, PreparedFile(split)), 0)
	if err != nil {
		return nil, err
	}
	if got := p.r.Meta().Split; got != split.String() {
		p.Close()
		return nil, fmt.Errorf("data: %s: meta split = %q, want %q", p.r.Name(), got, split)
	}
	return p, nil
}

// OpenPrepared opens a prepared file. Images with more than maxPixels
// pixels (0: DefaultMaxPixels) are refused.
func OpenPrepared(path string, maxPixels int) (*Prepared, error) {
	r, err := imageshard.Open(path)
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	p, err := newPrepared(r, maxPixels)
	if err != nil {
		r.Close()
		return nil, err
	}
	return p, nil
}

// newPrepared checks every record's size against maxPixels and finds
// whether all images have one size.
func newPrepared(r *imageshard.Reader, maxPixels int) (*Prepared, error) {
	if maxPixels <= 0 {
		maxPixels = DefaultMaxPixels
	}
	p := &Prepared{r: r, c: r.Meta().Channels}
	for i := range r.Len() {
		rec := r.Record(i)
		if rec.Width > maxPixels/rec.Height {
			return nil, fmt.Errorf("data: %s: item %d: %d × %d pixels (limit %d pixels)", r.Name(), i, rec.Width, rec.Height, maxPixels)
		}
		if i == 0 {
			p.h, p.w = rec.Height, rec.Width
		} else if rec.Height != p.h || rec.Width != p.w {
			p.h, p.w = 0, 0
		}
	}
	return p, nil
}

// Len returns the number of images.
func (p *Prepared) Len() int { return p.r.Len() }

// Classes returns the class names.
func (p *Prepared) Classes() []string { return p.r.Meta().Classes }

// Shape returns the channel count and the image size, (C, 0, 0) when
// images differ in size.
func (p *Prepared) Shape() (c, h, w int) { return p.c, p.h, p.w }

// Source returns the name of the data set the file was prepared from, as
// train's data.dataset gives it (imagefolder, cifar10, …).
func (p *Prepared) Source() string { return p.r.Meta().Source }

// Close closes the file and releases its mapping: no source that
// ItemSource returned may be used after it.
func (p *Prepared) Close() error { return p.r.Close() }

// Label returns item i's class from the index, reading no image, so that
// Subset draws the same items from a prepared set as from its source.
func (p *Prepared) Label(i int) int { return p.r.Record(i).Label }

// Item reads and decodes image i.
func (p *Prepared) Item(i int) (augment.Image, int, error) {
	src, label, err := p.ItemSource(i)
	if err != nil {
		return augment.Image{}, 0, err
	}
	img := augment.Whole(src)
	src.Release()
	return img, label, nil
}

// ItemSource reads image i and, for a JPEG, decodes it; the pixels are
// converted to float32 only as the caller asks for them. Where the file
// is memory-mapped (imageshard.Reader.View) the bytes are not copied: a
// raw image's source reads the mapping.
func (p *Prepared) ItemSource(i int) (ItemSource, int, error) {
	bp, _ := p.bufs.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	b, mapped, err := p.r.View(i, *bp)
	if err != nil {
		p.bufs.Put(bp)
		return nil, 0, fmt.Errorf("data: %w", err)
	}
	if !mapped {
		*bp = b
	}
	rec := p.r.Record(i)
	if rec.Encoding == imageshard.Raw {
		return rawSource{c: p.c, h: rec.Height, w: rec.Width, pix: b, release: func() { p.bufs.Put(bp) }}, rec.Label, nil
	}
	src, err := p.decodeJPEG(b, i, rec)
	p.bufs.Put(bp)
	if err != nil {
		return nil, 0, err
	}
	return src, rec.Label, nil
}

// decodeJPEG decodes item i's JPEG bytes, after checking that its size is
// the record's.
func (p *Prepared) decodeJPEG(b []byte, i int, rec imageshard.Record) (ItemSource, error) {
	name := fmt.Sprintf("%s: item %d", p.r.Name(), i)
	cfg, err := jpeg.DecodeConfig(b)
	if err != nil {
		return nil, fmt.Errorf("data: %s: %w", name, err)
	}
	if cfg.Height != rec.Height || cfg.Width != rec.Width {
		return nil, fmt.Errorf("data: %s: the JPEG is %d × %d, the index records %d × %d", name, cfg.Height, cfg.Width, rec.Height, rec.Width)
	}
	return decodeSource(b, name, 0, p.c)
}
