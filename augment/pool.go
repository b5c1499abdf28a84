package augment

import (
	"math/bits"
	"sync"
)

// pools[k] holds buffers with capacity of at least 1<<k values.
var pools [48]sync.Pool

// NewImage returns a (C, H, W) image whose pixel buffer comes from the
// package's pool when one is free. The pixel values are unspecified: callers
// write every pixel.
func NewImage(c, h, w int) Image {
	return Image{C: c, H: h, W: w, Pix: getBuf(c * h * w)}
}

// Recycle hands img's buffer back to the pool. img must not be used
// afterwards. Images whose buffers are shared (views into a batch, dataset
// storage) must not be recycled.
func Recycle(img Image) {
	putBuf(img.Pix)
}

func getBuf(n int) []float32 {
	if n <= 0 {
		return nil
	}
	class := bits.Len(uint(n - 1)) // 1<<class >= n
	if p, ok := pools[class].Get().(*[]float32); ok {
		return (*p)[:n]
	}
	return make([]float32, n, 1<<class)
}

func putBuf(b []float32) {
	c := cap(b)
	if c == 0 {
		return
	}
	class := bits.Len(uint(c)) - 1 // c >= 1<<class
	if class >= len(pools) {
		return
	}
	b = b[:0]
	pools[class].Put(&b)
}
