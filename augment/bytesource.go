package augment

import "math/rand/v2"

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

// BytePlanes is a ByteSource whose whole image is planar bytes in memory
// (a raw image): a transform that resamples it at full size reads the
// rows it needs in place, without RegionBytes's copy.
type BytePlanes interface {
	ByteSource
	// Planes returns the (C, H, W) levels of the image, which the caller
	// does not modify.
	Planes() []byte
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
		Recycle(region)
		if flip {
			flipRows(out)
		}
		return out
	}
	return resampleBytes(bs, top, left, h, w, outH, outW, 0, 0, outH, outW, interp, flip)
}

// resampleBytes is resampleSource on a ByteSource, computing only the
// (wh, ww) window whose top-left corner is (wy, wx) of the (outH, outW)
// result: the rows and columns of the region that window reads alone are
// resampled, with the weights of the whole result (the same values).
func resampleBytes(bs ByteSource, top, left, h, w, outH, outW, wy, wx, wh, ww int, interp Interp, flip bool) Image {
	c, _, _ := bs.Size()
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
	whole := f == 1 && wy == 0 && wx == 0 && wh == outH && ww == outW
	coX := computeCoeffsBox(rw, boxX[0], boxX[1], outW, interp).window(wx, ww)
	coY := computeCoeffsBox(rh, boxY[0], boxY[1], outH, interp).window(wy, wh)
	// The rows the window's outputs read, and the columns.
	y0, y1 := 0, rh
	x0, x1 := 0, rw
	if !whole {
		y0, y1 = coY.span()
		x0, x1 = coX.span()
		coY, coX = coY.shifted(y0), coX.shifted(x0)
	}
	nh, nw := y1-y0, x1-x0
	var tmp Image
	if planes, ok := bs.(BytePlanes); ok && f == 1 {
		_, sh, sw := bs.Size()
		rows := byteRows{pix: planes.Planes(), planeH: sh, stride: sw, top: rt + y0, left: rl + x0, w: nw}
		tmp = horizontalRows(rows, c, nh, nw, ww, coX, whole && nw == ww, flip)
	} else {
		pix := levelPool.get(c * nh * nw)
		bs.RegionBytes(pix, rt+y0, rl+x0, nh, nw, f)
		tmp = horizontalRows(byteRows{pix: pix, planeH: nh, stride: nw, w: nw}, c, nh, nw, ww, coX, whole && nw == ww, flip)
		levelPool.put(pix)
	}
	if whole && nh == wh {
		return tmp
	}
	out := verticalRows(tmp, wh, coY)
	Recycle(tmp)
	return out
}

// ApplySource resizes the image given as a Source (see Resize): a
// ByteSource is read as bytes, reduced by the largest factor that keeps
// the image at least the output size. Otherwise it is Apply on the whole
// image.
func (r Resize) ApplySource(src Source, rng *rand.Rand) Image {
	return r.applySource(src, rng, nil)
}

// applySource is ApplySource followed by crop (when not nil): a
// ByteSource resamples the crop's window of the resized image alone.
func (r Resize) applySource(src Source, rng *rand.Rand, crop *CenterCrop) Image {
	_, ih, iw := src.Size()
	h, w := shortSideSize(ih, iw, r.Size)
	bs, ok := src.(ByteSource)
	if !ok || (h == ih && w == iw) {
		out := r.Apply(Whole(src), rng)
		if crop != nil {
			out = crop.Apply(out, rng)
		}
		return out
	}
	interp := r.Interp.pick(rng)
	if crop == nil || crop.H > h || crop.W > w {
		out := resampleBytes(bs, 0, 0, ih, iw, h, w, 0, 0, h, w, interp, false)
		if crop != nil {
			out = crop.Apply(out, rng)
		}
		return out
	}
	top, left := crop.offsets(h, w)
	return resampleBytes(bs, 0, 0, ih, iw, h, w, top, left, crop.H, crop.W, interp, false)
}
