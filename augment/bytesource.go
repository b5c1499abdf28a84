package augment

import (
	"math/rand/v2"
	"sync"
)

// ByteSource is a Source whose pixels are bytes (levels 0…255, value
// level/255): a transform that resamples it reads the bytes of the part it
// needs directly, and where the encoding allows it (JPEG's DCT scaling),
// reads them from the image reduced by a factor, never building a float
// copy of the part or of the whole image.
type ByteSource interface {
	Source
	// MaxReduction returns the largest factor RegionBytes takes: 1, or 8
	// for a JPEG (1, 2, 4 and 8).
	MaxReduction() int
	// ReducedSize returns the image's size reduced by factor, each side
	// rounded up.
	ReducedSize(factor int) (h, w int)
	// RegionBytes writes the (C, h, w) part whose top-left corner is
	// (top, left) of the image reduced by factor into dst, planar, len(dst)
	// = C·h·w; the part lies inside the reduced image.
	RegionBytes(dst []byte, top, left, h, w, factor int)
}

// reduction returns the largest factor (a power of two up to max) by
// which an (h, w) region can be reduced and still cover (outH, outW)
// pixels on both sides: the resampling that follows then never enlarges
// what it would have shrunk.
func reduction(h, w, outH, outW, max int) int {
	f := 1
	for f*2 <= max && h >= 2*f*outH && w >= 2*f*outW {
		f *= 2
	}
	return f
}

// reducedRegion returns the part of the image reduced by f that covers the
// full-size region (top, left, h, w): its corners rounded outwards,
// clipped to the reduced size (rh, rw).
func reducedRegion(top, left, h, w, f, rh, rw int) (t, l, hh, ww int) {
	t, l = top/f, left/f
	b, r := min((top+h+f-1)/f, rh), min((left+w+f-1)/f, rw)
	return t, l, b - t, r - l
}

// bytePool holds the byte buffers of regions read from ByteSources.
var bytePool sync.Pool

// resampleSource reads the (top, left, h, w) region of src and resizes it
// to (outH, outW), mirrored left-right when flip is set. A ByteSource is
// read as bytes, reduced by the largest factor that keeps the region at
// least (outH, outW); any other Source converts the region to float32
// first. At factor 1 both give the same values.
func resampleSource(src Source, top, left, h, w, outH, outW int, interp Interp, flip bool) Image {
	bs, ok := src.(ByteSource)
	if !ok {
		region := src.Region(top, left, h, w)
		out := resampleCrop(region, 0, 0, h, w, outH, outW, interp)
		if &out.Pix[0] != &region.Pix[0] {
			Recycle(region)
		}
		if flip {
			flipRows(out)
		}
		return out
	}
	c, _, _ := src.Size()
	f := reduction(h, w, outH, outW, bs.MaxReduction())
	// The region read, and the span of it to resample: the whole region
	// at full size; at a reduction, the full-size region's edges divided
	// by f inside the region rounded outwards.
	rt, rl, rh, rw := top, left, h, w
	boxY := [2]float64{0, float64(h)}
	boxX := [2]float64{0, float64(w)}
	if f > 1 {
		sh, sw := bs.ReducedSize(f)
		rt, rl, rh, rw = reducedRegion(top, left, h, w, f, sh, sw)
		ff := float64(f)
		boxY = [2]float64{float64(top)/ff - float64(rt), float64(top+h)/ff - float64(rt)}
		boxX = [2]float64{float64(left)/ff - float64(rl), float64(left+w)/ff - float64(rl)}
	}
	bp, _ := bytePool.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	if cap(*bp) < c*rh*rw {
		*bp = make([]byte, c*rh*rw)
	}
	pix := (*bp)[:c*rh*rw]
	bs.RegionBytes(pix, rt, rl, rh, rw, f)
	rows := func(ch, y int, dst []float32) {
		for x, v := range pix[(ch*rh+y)*rw:][:rw] {
			dst[x] = levelValue[v]
		}
	}
	tmp := horizontalRows(rows, c, rh, rw, outW, computeCoeffsBox(rw, boxX[0], boxX[1], outW, interp), f == 1 && rw == outW, flip)
	bytePool.Put(bp)
	out := tmp
	if f > 1 || rh != outH {
		out = verticalRows(tmp, outH, computeCoeffsBox(rh, boxY[0], boxY[1], outH, interp))
		Recycle(tmp)
	}
	return out
}

// ApplySource resizes the image given as a Source (see Resize): a
// ByteSource is read as bytes, reduced by the largest factor that keeps
// the image at least the output size. Otherwise it is Apply on the whole
// image.
func (r Resize) ApplySource(src Source, rng *rand.Rand) Image {
	_, ih, iw := src.Size()
	h, w := shortSideSize(ih, iw, r.Size)
	if _, ok := src.(ByteSource); !ok || (h == ih && w == iw) {
		return r.Apply(Whole(src), rng)
	}
	return resampleSource(src, 0, 0, ih, iw, h, w, r.Interp.pick(rng), false)
}
