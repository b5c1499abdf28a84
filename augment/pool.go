package augment

import (
	"math/bits"
	"sync"
)

// sizedPool holds buffers of T by size class: class k holds buffers with
// capacity of at least 1<<k values.
type sizedPool[T any] [48]sync.Pool

// get returns a buffer of n values (unspecified), from the pool when one
// is free.
func (p *sizedPool[T]) get(n int) []T {
	if n <= 0 {
		return nil
	}
	class := bits.Len(uint(n - 1)) // 1<<class >= n
	if b, ok := p[class].Get().(*[]T); ok {
		return (*b)[:n]
	}
	return make([]T, n, 1<<class)
}

// put hands b back to the pool.
func (p *sizedPool[T]) put(b []T) {
	c := cap(b)
	if c == 0 {
		return
	}
	class := bits.Len(uint(c)) - 1 // c >= 1<<class
	if class >= len(p) {
		return
	}
	b = b[:0]
	p[class].Put(&b)
}

// floatPool holds the pixel buffers of Images; levelPool those of
// ByteImages.
var (
	floatPool sizedPool[float32]
	levelPool sizedPool[uint8]
)

// NewImage returns a (C, H, W) image whose pixel buffer comes from the
// package's pool when one is free. The pixel values are unspecified: callers
// write every pixel.
func NewImage(c, h, w int) Image {
	return Image{C: c, H: h, W: w, Pix: floatPool.get(c * h * w)}
}

// Recycle hands img's buffer back to the pool. img must not be used
// afterwards. Images whose buffers are shared (views into a batch, dataset
// storage) must not be recycled.
func Recycle(img Image) {
	floatPool.put(img.Pix)
}

// newLevelImage returns a (C, H, W) image of levels whose buffer comes from
// the pool when one is free; its values are unspecified.
func newLevelImage(c, h, w int) levelImage {
	return levelImage{C: c, H: h, W: w, Pix: levelPool.get(c * h * w)}
}

// recycleBytes hands img's buffer back to the pool.
func recycleBytes(img levelImage) {
	levelPool.put(img.Pix)
}
