package ops

import (
	"fmt"
	"math"
)

// convGeom is the geometry of a 2-D sliding window (convolution or pooling)
// over one (C, H, W) image: a KH×KW kernel, the same stride and zero padding
// on both axes, giving an (OH, OW) output.
type convGeom struct {
	c, h, w     int
	kh, kw      int
	stride, pad int
	oh, ow      int
}

func newConvGeom(c, h, w, kh, kw, stride, pad int) (convGeom, error) {
	if stride < 1 || pad < 0 {
		return convGeom{}, fmt.Errorf("stride %d must be ≥ 1 and padding %d ≥ 0", stride, pad)
	}
	if kh < 1 || kw < 1 {
		return convGeom{}, fmt.Errorf("kernel %d×%d must be at least 1×1", kh, kw)
	}
	if h+2*pad < kh || w+2*pad < kw {
		return convGeom{}, fmt.Errorf("kernel %d×%d is larger than the padded input %d×%d", kh, kw, h+2*pad, w+2*pad)
	}
	g := convGeom{c: c, h: h, w: w, kh: kh, kw: kw, stride: stride, pad: pad}
	g.oh = (h+2*pad-kh)/stride + 1
	g.ow = (w+2*pad-kw)/stride + 1
	return g, nil
}

// colRows is the number of rows of the column matrix: C·KH·KW.
func (g convGeom) colRows() int { return g.c * g.kh * g.kw }

// colCols is the number of output positions: OH·OW.
func (g convGeom) colCols() int { return g.oh * g.ow }

// imageSize is C·H·W.
func (g convGeom) imageSize() int { return g.c * g.h * g.w }

// validRange returns the output columns [lo, hi) whose input column
// ox·stride + off lies inside [0, W).
func (g convGeom) validRange(off int) (lo, hi int) {
	if off < 0 {
		lo = (-off + g.stride - 1) / g.stride
	}
	last := g.w - 1 - off
	if last < 0 {
		return 0, 0
	}
	hi = min(g.ow, last/g.stride+1)
	if hi < lo {
		return 0, 0
	}
	return lo, hi
}

// im2col writes the (C·KH·KW, OH·OW) column matrix of img (C, H, W) into
// col, whose rows are ld apart: row (c·KH + i)·KW + j holds, for every
// output position, the input pixel under kernel tap (i, j) of channel c, or
// 0 in the padding.
func im2col[T Float](g convGeom, img, col []T, ld int) {
	n := g.colCols()
	shifted := g.stride == 1 && g.ow == g.w
	for c := 0; c < g.c; c++ {
		plane := img[c*g.h*g.w : (c+1)*g.h*g.w]
		for i := 0; i < g.kh; i++ {
			for j := 0; j < g.kw; j++ {
				row := col[((c*g.kh+i)*g.kw+j)*ld:][:n]
				if shifted {
					tapRowShifted(g, plane, row, i, j)
				} else {
					tapRow(g, plane, row, i, j)
				}
			}
		}
	}
}

// tapRow sets row (OH·OW) to the pixels of plane (H, W) under kernel tap
// (i, j) at every output position, 0 in the padding, one output row at a
// time.
func tapRow[T Float](g convGeom, plane, row []T, i, j int) {
	off := j - g.pad
	lo, hi := g.validRange(off)
	for oy := 0; oy < g.oh; oy++ {
		dst := row[oy*g.ow : (oy+1)*g.ow]
		iy := oy*g.stride - g.pad + i
		if iy < 0 || iy >= g.h {
			clear(dst)
			continue
		}
		src := plane[iy*g.w : (iy+1)*g.w]
		clear(dst[:lo])
		clear(dst[hi:])
		if g.stride == 1 {
			copy(dst[lo:hi], src[lo+off:hi+off])
			continue
		}
		for ox := lo; ox < hi; ox++ {
			dst[ox] = src[ox*g.stride+off]
		}
	}
}

// tapRowShifted is tapRow where the output rows are as long as the
// input's (stride 1, OW = W, as a 3×3 convolution with padding 1 has
// them): the tap then reads plane shifted by i − pad rows and j − pad
// columns, so that the output rows inside the image are one copy of it.
// The copy carries pixels across the ends of rows into the lo and hi
// columns that lie in the padding, which are then zeroed, as are the
// output rows above and below the image.
func tapRowShifted[T Float](g convGeom, plane, row []T, i, j int) {
	ow, off := g.ow, j-g.pad
	lo, hi := g.validRange(off)
	oy0, oy1 := max(0, g.pad-i), min(g.oh, g.h+g.pad-i)
	if oy0 >= oy1 || lo >= hi {
		clear(row)
		return
	}
	d0, d1 := oy0*ow+lo, (oy1-1)*ow+hi
	shift := (i-g.pad)*g.w + off
	clear(row[:d0])
	copy(row[d0:d1], plane[d0+shift:d1+shift])
	clear(row[d1:])
	for oy := oy0; oy < oy1; oy++ {
		r := row[oy*ow : (oy+1)*ow]
		for x := range lo {
			r[x] = 0
		}
		for x := hi; x < ow; x++ {
			r[x] = 0
		}
	}
}

// col2im is the adjoint of im2col: it sets img (C, H, W) to the sum, over
// every kernel tap, of the column entries (rows ld apart) that read each
// pixel. It may overwrite col's entries that lie in the padding.
func col2im[T Float](g convGeom, col []T, ld int, img []T) {
	clear(img[:g.imageSize()])
	n := g.colCols()
	shifted := g.stride == 1 && g.ow == g.w
	for c := 0; c < g.c; c++ {
		plane := img[c*g.h*g.w : (c+1)*g.h*g.w]
		for i := 0; i < g.kh; i++ {
			for j := 0; j < g.kw; j++ {
				row := col[((c*g.kh+i)*g.kw+j)*ld:][:n]
				if shifted {
					addTapShifted(g, row, plane, i, j)
				} else {
					addTap(g, row, plane, i, j)
				}
			}
		}
	}
}

// addTap adds row (OH·OW), kernel tap (i, j)'s entries, to the pixels of
// plane (H, W) they read, one output row at a time.
func addTap[T Float](g convGeom, row, plane []T, i, j int) {
	off := j - g.pad
	lo, hi := g.validRange(off)
	for oy := 0; oy < g.oh; oy++ {
		iy := oy*g.stride - g.pad + i
		if iy < 0 || iy >= g.h {
			continue
		}
		src := row[oy*g.ow : (oy+1)*g.ow]
		dst := plane[iy*g.w : (iy+1)*g.w]
		if g.stride == 1 {
			d := dst[lo+off : hi+off]
			for k, v := range src[lo:hi] {
				d[k] += v
			}
			continue
		}
		for ox := lo; ox < hi; ox++ {
			dst[ox*g.stride+off] += src[ox]
		}
	}
}

// addTapShifted is addTap where the output rows are as long as the
// input's (stride 1, OW = W; see tapRowShifted): the output rows inside
// the image add to plane shifted by i − pad rows and j − pad columns in
// one pass, after row's entries in the lo and hi columns, which lie in
// the padding, are set to −0, which leaves every sum as it is (x + −0 =
// x, for x = +0 too). Each pixel takes at most one entry of a tap, so
// every pixel's sum runs in addTap's order.
func addTapShifted[T Float](g convGeom, row, plane []T, i, j int) {
	ow, off := g.ow, j-g.pad
	lo, hi := g.validRange(off)
	oy0, oy1 := max(0, g.pad-i), min(g.oh, g.h+g.pad-i)
	if oy0 >= oy1 || lo >= hi {
		return
	}
	negZero := T(math.Copysign(0, -1))
	for oy := oy0; oy < oy1; oy++ {
		r := row[oy*ow : (oy+1)*ow]
		for x := range lo {
			r[x] = negZero
		}
		for x := hi; x < ow; x++ {
			r[x] = negZero
		}
	}
	d0, d1 := oy0*ow+lo, (oy1-1)*ow+hi
	shift := (i-g.pad)*g.w + off
	addTo(plane[d0+shift:d1+shift], row[d0:d1])
}
