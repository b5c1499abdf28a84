package augment

import "math"

// PIL's antialiased separable resampling (Resample.c): each output pixel is a
// normalised weighted sum of the input pixels under the filter, stretched by
// the downscale factor.

func bilinearFilter(x float64) float64 {
	if x < 0 {
		x = -x
	}
	if x < 1 {
		return 1 - x
	}
	return 0
}

func bicubicFilter(x float64) float64 {
	const a = -0.5
	if x < 0 {
		x = -x
	}
	if x < 1 {
		return ((a+2)*x-(a+3))*x*x + 1
	}
	if x < 2 {
		return (((x-5)*x+8)*x - 4) * a
	}
	return 0
}

// coeffs holds, for each output position o, the first input index start[o]
// and the weights w[o*ksize : o*ksize+size[o]].
type coeffs struct {
	ksize       int
	start, size []int
	w           []float32
}

// window returns the weights of outputs [o, o+n) alone.
func (c coeffs) window(o, n int) coeffs {
	return coeffs{ksize: c.ksize, start: c.start[o : o+n], size: c.size[o : o+n], w: c.w[o*c.ksize : (o+n)*c.ksize]}
}

// span returns the input pixels [lo, hi) that c's outputs read.
func (c coeffs) span() (lo, hi int) {
	lo, hi = math.MaxInt, 0
	for o, st := range c.start {
		if c.size[o] > 0 {
			lo, hi = min(lo, st), max(hi, st+c.size[o])
		}
	}
	if lo > hi {
		return 0, 0
	}
	return lo, hi
}

// reversed returns c with its outputs in reverse order: output o of the
// result is output len-1-o of c.
func (c coeffs) reversed() coeffs {
	n := len(c.start)
	r := coeffs{ksize: c.ksize, start: make([]int, n), size: make([]int, n), w: make([]float32, len(c.w))}
	for o := range n {
		p := n - 1 - o
		r.start[o], r.size[o] = c.start[p], c.size[p]
		copy(r.w[o*c.ksize:(o+1)*c.ksize], c.w[p*c.ksize:(p+1)*c.ksize])
	}
	return r
}

// shifted returns c with every tap's start moved by -d.
func (c coeffs) shifted(d int) coeffs {
	start := make([]int, len(c.start))
	for o, st := range c.start {
		start[o] = st - d
	}
	c.start = start
	return c
}

// computeCoeffs computes PIL's resampling weights from an input axis of
// inSize pixels to outSize pixels.
func computeCoeffs(inSize, outSize int, interp Interp) coeffs {
	return computeCoeffsBox(inSize, 0, float64(inSize), outSize, interp)
}

// computeCoeffsBox computes PIL's resampling weights from the span
// [in0, in1) of an input axis of inSize pixels (PIL's resize box) to
// outSize pixels; taps stay inside [0, inSize).
func computeCoeffsBox(inSize int, in0, in1 float64, outSize int, interp Interp) coeffs {
	filter, support := bilinearFilter, 1.0
	if interp == Bicubic {
		filter, support = bicubicFilter, 2.0
	}
	scale := (in1 - in0) / float64(outSize)
	filterScale := math.Max(scale, 1)
	support *= filterScale
	ksize := int(math.Ceil(support))*2 + 1
	c := coeffs{ksize: ksize, start: make([]int, outSize), size: make([]int, outSize), w: make([]float32, outSize*ksize)}
	ss := 1 / filterScale
	k := make([]float64, ksize)
	for o := 0; o < outSize; o++ {
		center := in0 + (float64(o)+0.5)*scale
		xmin := max(int(center-support+0.5), 0)
		xmax := min(int(center+support+0.5), inSize) - xmin
		ww := 0.0
		for x := 0; x < xmax; x++ {
			k[x] = filter((float64(x+xmin) - center + 0.5) * ss)
			ww += k[x]
		}
		for x := 0; x < xmax; x++ {
			if ww != 0 {
				k[x] /= ww
			}
			c.w[o*ksize+x] = float32(k[x])
		}
		c.start[o], c.size[o] = xmin, xmax
	}
	return c
}

// resampleCrop resizes the (ch, cw) region of src whose top-left corner is
// (top, left) to (outH, outW), as torchvision's resized_crop on a PIL image
// does (crop, then PIL resize): filter taps stay inside the region. The
// region must lie inside src. src is not modified.
func resampleCrop(src Image, top, left, ch, cw, outH, outW int, interp Interp) Image {
	tmp := horizontalPass(src, top, left, ch, cw, outW, interp)
	out := verticalPass(tmp, outH, interp)
	if tmp.Pix != nil && &tmp.Pix[0] != &out.Pix[0] {
		Recycle(tmp)
	}
	return out
}

// horizontalPass resamples rows top..top+ch of src, columns left..left+cw,
// to outW columns. It returns a (C, ch, outW) image from the pool.
func horizontalPass(src Image, top, left, ch, cw, outW int, interp Interp) Image {
	rows := floatRows{src: src, top: top, left: left, cw: cw}
	return horizontalRows(rows, src.C, ch, cw, outW, computeCoeffs(cw, outW, interp), cw == outW, false)
}

// rowReader gives horizontalRows the rows of cw values it resamples.
type rowReader interface {
	// row writes row y of channel c into dst (len cw).
	row(c, y int, dst []float32)
	// rows8 writes rows y…y+7 of channel c into inter interleaved column
	// by column: inter[x·8+r] is value x of row y+r (len 8·cw).
	rows8(c, y int, inter []float32)
}

// floatRows reads the (·, cw) region of src whose top-left corner is
// (top, left).
type floatRows struct {
	src           Image
	top, left, cw int
}

func (f floatRows) row(c, y int, dst []float32) {
	copy(dst, f.src.Pix[(c*f.src.H+f.top+y)*f.src.W+f.left:][:f.cw])
}

func (f floatRows) rows8(c, y int, inter []float32) {
	for r := range 8 {
		for x, v := range f.src.Pix[(c*f.src.H+f.top+y+r)*f.src.W+f.left:][:f.cw] {
			inter[x*8+r] = v
		}
	}
}

// byteRows reads the rows of w levels whose first is at column left of
// row top of planar levels (planes of planeH rows of stride levels each)
// as values level/255.
type byteRows struct {
	pix                       []byte
	planeH, stride, top, left int
	w                         int
}

// at returns channel c's levels from row y of the region on.
func (b byteRows) at(c, y int) []byte {
	return b.pix[(c*b.planeH+b.top+y)*b.stride+b.left:]
}

func (b byteRows) row(c, y int, dst []float32) {
	dst = dst[:b.w]
	for x, l := range b.at(c, y)[:b.w] {
		dst[x] = levelValue[l]
	}
}

func (b byteRows) rows8(c, y int, inter []float32) {
	rows8Levels(inter, b.at(c, y), b.w, b.stride)
}

// rows8Levels writes the values level/255 of the 8 rows of n levels at
// pix (rows stride apart) into inter interleaved column by column,
// inter[x·8+r] = level x of row r: rows8LevelsGeneric, or its AVX2
// version (the same values) where the processor has AVX2.
var rows8Levels = rows8LevelsGeneric

func rows8LevelsGeneric(inter []float32, pix []byte, n, stride int) {
	for r := range 8 {
		for x, l := range pix[r*stride:][:n] {
			inter[x*8+r] = levelValue[l]
		}
	}
}

// horizontalRows resamples the ch rows of cw values of each of c channels
// to outW columns with the weights co (or copies them, with same),
// mirrored left-right when flip is set, reading them from read. It
// returns a (c, ch, outW) image from the pool.
func horizontalRows(read rowReader, c, ch, cw, outW int, co coeffs, same, flip bool) Image {
	out := NewImage(c, ch, outW)
	buf := NewImage(1, 4, cw)
	defer Recycle(buf)
	r0, r1, r2, r3 := buf.Pix[:cw], buf.Pix[cw:2*cw], buf.Pix[2*cw:3*cw], buf.Pix[3*cw:4*cw]
	if same {
		for k := 0; k < c; k++ {
			for y := 0; y < ch; y++ {
				dst := out.Pix[(k*ch+y)*outW : (k*ch+y+1)*outW]
				read.row(k, y, dst)
				if flip {
					reverse(dst)
				}
			}
		}
		return out
	}
	if flip {
		// Output x of the flipped row is output outW-1-x of the row.
		co = co.reversed()
	}
	var inter []float32 // 8 rows interleaved, for horizontalTaps8
	n8 := 0             // outputs horizontalTaps8 computes
	if horizontalTaps8 != nil && ch >= 8 {
		n8 = outW &^ 7
		ib := NewImage(1, 8, cw)
		defer Recycle(ib)
		inter = ib.Pix
	}
	for k := 0; k < c; k++ {
		y := 0
		// Eight rows at a time where an assembly kernel does it: the rows
		// interleaved column by column, each output's taps summed over
		// the eight rows at once, in the order of the scalar code below.
		for ; n8 > 0 && y+8 <= ch; y += 8 {
			read.rows8(k, y, inter)
			d := out.Pix[(k*ch+y)*outW : (k*ch+y+8)*outW]
			horizontalTaps8(&d[0], outW, &inter[0], &co.start[0], &co.size[0], &co.w[0], co.ksize, n8)
			for r := range 8 {
				row := d[r*outW : (r+1)*outW]
				for x := n8; x < outW; x++ {
					st, n := co.start[x], co.size[x]
					var s float32
					for j, wk := range co.w[x*co.ksize : x*co.ksize+n] {
						s += float32(wk * inter[(st+j)*8+r])
					}
					row[x] = clamp01(s)
				}
			}
		}
		// Four rows at a time: the same taps and weights, four independent
		// sums, each added up in the order a single row's is.
		for ; y+4 <= ch; y += 4 {
			read.row(k, y, r0)
			read.row(k, y+1, r1)
			read.row(k, y+2, r2)
			read.row(k, y+3, r3)
			d := out.Pix[(k*ch+y)*outW : (k*ch+y+4)*outW]
			for x := 0; x < outW; x++ {
				st, n := co.start[x], co.size[x]
				w := co.w[x*co.ksize : x*co.ksize+n]
				a0, a1, a2, a3 := r0[st:st+n], r1[st:st+n], r2[st:st+n], r3[st:st+n]
				var s0, s1, s2, s3 float32
				for k, wk := range w {
					s0 += float32(wk * a0[k])
					s1 += float32(wk * a1[k])
					s2 += float32(wk * a2[k])
					s3 += float32(wk * a3[k])
				}
				d[x], d[outW+x], d[2*outW+x], d[3*outW+x] = clamp01(s0), clamp01(s1), clamp01(s2), clamp01(s3)
			}
		}
		for ; y < ch; y++ {
			read.row(k, y, r0)
			dst := out.Pix[(k*ch+y)*outW : (k*ch+y+1)*outW]
			for x := range dst {
				st, n := co.start[x], co.size[x]
				w := co.w[x*co.ksize : x*co.ksize+n]
				in := r0[st : st+n]
				var s float32
				for k, wk := range w {
					s += float32(wk * in[k])
				}
				dst[x] = clamp01(s)
			}
		}
	}
	return out
}

// horizontalTaps8 is nil, or an assembly kernel that resamples 8 rows
// interleaved column by column (src[c·8+r]) to n (a multiple of 8)
// outputs of each row with the weights start, size, w and ksize of
// coeffs: dst[r·outStride+x] = clamp01(Σ_k w[x·ksize+k]·src[(start[x]+k)·8+r]),
// each sum added up from 0 one tap at a time, each product rounded.
var horizontalTaps8 func(dst *float32, outStride int, src *float32, start, size *int, w *float32, ksize, n int)

// reverse mirrors s in place.
func reverse(s []float32) {
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
}

// verticalPass resamples the rows of src to outH rows. It returns src itself
// when no resampling is needed, otherwise a new image from the pool.
func verticalPass(src Image, outH int, interp Interp) Image {
	if src.H == outH {
		return src
	}
	return verticalRows(src, outH, computeCoeffs(src.H, outH, interp))
}

// verticalRows resamples the rows of src to outH rows with the weights
// co. It returns a new image from the pool.
func verticalRows(src Image, outH int, co coeffs) Image {
	out := NewImage(src.C, outH, src.W)
	w := src.W
	for c := 0; c < src.C; c++ {
		plane := src.Plane(c)
		for y := 0; y < outH; y++ {
			dst := out.Pix[(c*outH+y)*w : (c*outH+y+1)*w]
			st, n := co.start[y], co.size[y]
			verticalTaps(dst, plane[st*w:], w, co.w[y*co.ksize:y*co.ksize+n])
		}
	}
	return out
}

// verticalTaps sets dst[x] = clamp01(Σ_k w[k]·src[k·stride+x]):
// verticalTapsGeneric, or its AVX2 version (the same values) where the
// processor has AVX2.
var verticalTaps = verticalTapsGeneric

// verticalTapsGeneric sets dst[x] = clamp01(Σ_k w[k]·src[k·stride+x]),
// each sum added up from 0 one tap at a time, in tap order, each product
// rounded to float32 (never fused with the addition).
func verticalTapsGeneric(dst, src []float32, stride int, w []float32) {
	clear(dst)
	k := 0
	// Four taps at a time: each value is added up in the order of one tap
	// at a time, with a quarter of the passes over dst.
	for ; k+4 <= len(w); k += 4 {
		row := func(j int) []float32 { return src[(k+j)*stride : (k+j)*stride+len(dst)] }
		a, b, c, d := row(0), row(1), row(2), row(3)
		w0, w1, w2, w3 := w[k], w[k+1], w[k+2], w[k+3]
		for x := range dst {
			dst[x] = dst[x] + float32(w0*a[x]) + float32(w1*b[x]) + float32(w2*c[x]) + float32(w3*d[x])
		}
	}
	for ; k < len(w); k++ {
		wk := w[k]
		for x, v := range src[k*stride : k*stride+len(dst)] {
			dst[x] += float32(wk * v)
		}
	}
	for x, v := range dst {
		dst[x] = clamp01(v)
	}
}
