package augment

// RandAugment's operations on 8-bit levels, computed as PIL 9.4 computes
// them on an RGB or L image (ImageOps, ImageEnhance, Image.transform), to
// the level. The level-table operations work in place; the others return a
// new image from the pool and recycle their input, or work in place where
// noted.

import "encoding/binary"

// mapLevels maps every level of img through lut, in place, eight levels
// to a 64-bit load and store.
func mapLevels(img levelImage, lut *[256]uint8) levelImage {
	p := img.Pix
	n := len(p) &^ 7
	for i := 0; i < n; i += 8 {
		v := binary.LittleEndian.Uint64(p[i:])
		v = uint64(lut[uint8(v)]) | uint64(lut[uint8(v>>8)])<<8 |
			uint64(lut[uint8(v>>16)])<<16 | uint64(lut[uint8(v>>24)])<<24 |
			uint64(lut[uint8(v>>32)])<<32 | uint64(lut[uint8(v>>40)])<<40 |
			uint64(lut[uint8(v>>48)])<<48 | uint64(lut[v>>56])<<56
		binary.LittleEndian.PutUint64(p[i:], v)
	}
	for i, l := range p[n:] {
		p[n+i] = lut[l]
	}
	return img
}

// identityLevels maps every level to itself.
var identityLevels = func() (t [256]uint8) {
	for i := range t {
		t[i] = uint8(i)
	}
	return
}()

func levelHistogram(plane []uint8) (h [256]int) {
	// Four partial counts, so that a run of one level does not wait on
	// its own count's last store at every pixel.
	var part [4][256]int
	n := len(plane) &^ 3
	for i := 0; i < n; i += 4 {
		q := plane[i : i+4 : i+4]
		part[0][q[0]]++
		part[1][q[1]]++
		part[2][q[2]]++
		part[3][q[3]]++
	}
	for _, l := range plane[n:] {
		part[0][l]++
	}
	for l := range h {
		h[l] = part[0][l] + part[1][l] + part[2][l] + part[3][l]
	}
	return h
}

// autoContrastLevels stretches each channel so that its darkest level maps
// to 0 and its brightest to 255 (ImageOps.autocontrast, cutoff 0).
func autoContrastLevels(img levelImage) levelImage {
	for c := range img.C {
		p := img.Plane(c)
		h := levelHistogram(p)
		lo, hi := 0, 255
		for lo < 256 && h[lo] == 0 {
			lo++
		}
		for hi >= 0 && h[hi] == 0 {
			hi--
		}
		if hi <= lo {
			continue
		}
		var lut [256]uint8
		scale := 255 / float64(hi-lo)
		offset := -float64(lo) * scale
		for i := range lut {
			lut[i] = uint8(min(max(int(float64(i)*scale+offset), 0), 255))
		}
		mapLevels(levelImage{C: 1, H: 1, W: len(p), Pix: p}, &lut)
	}
	return img
}

// equalizeLevels equalises the histogram of each channel
// (ImageOps.equalize).
func equalizeLevels(img levelImage) levelImage {
	for c := range img.C {
		p := img.Plane(c)
		h := levelHistogram(p)
		last, total, nonzero := 0, 0, 0
		for _, n := range h {
			if n > 0 {
				last = n
				total += n
				nonzero++
			}
		}
		step := (total - last) / 255
		if nonzero <= 1 || step == 0 {
			continue
		}
		var lut [256]uint8
		n := step / 2
		for i := range lut {
			lut[i] = uint8(min(n/step, 255))
			n += h[i]
		}
		mapLevels(levelImage{C: 1, H: 1, W: len(p), Pix: p}, &lut)
	}
	return img
}

// invertLevels maps level l to 255-l (ImageOps.invert).
func invertLevels(img levelImage) levelImage {
	maskLevels(img.Pix, 0xff, 0xff) // 255 - l is l ^ 0xff
	return img
}

// maskLevels sets every level l of p to l&and ^ xor, eight levels to a
// 64-bit load and store.
func maskLevels(p []uint8, and, xor uint8) {
	const ones = 0x0101010101010101
	a, x := uint64(and)*ones, uint64(xor)*ones
	n := len(p) &^ 7
	for i := 0; i < n; i += 8 {
		binary.LittleEndian.PutUint64(p[i:], binary.LittleEndian.Uint64(p[i:])&a^x)
	}
	for i := n; i < len(p); i++ {
		p[i] = p[i]&and ^ xor
	}
}

// posterizeLevels keeps the top bits of every level (ImageOps.posterize);
// bits >= 8 leaves the image unchanged.
func posterizeLevels(img levelImage, bits int) levelImage {
	if bits >= 8 {
		return img
	}
	maskLevels(img.Pix, uint8(0xff<<(8-max(bits, 0))), 0)
	return img
}

// solarizeLevels inverts the levels at or above thresh
// (ImageOps.solarize).
func solarizeLevels(img levelImage, thresh int) levelImage {
	lut := identityLevels
	for i := max(thresh, 0); i < 256; i++ {
		lut[i] = uint8(255 - i)
	}
	return mapLevels(img, &lut)
}

// solarizeAddLevels adds add to the levels below 128, saturating at 255
// (timm's solarize_add).
func solarizeAddLevels(img levelImage, add int) levelImage {
	lut := identityLevels
	for i := range 128 {
		lut[i] = uint8(min(max(i+add, 0), 255))
	}
	return mapLevels(img, &lut)
}

// blendLevel is PIL's Image.blend(degenerate, image, alpha) for one pair
// of levels: deg + alpha·(v - deg) in float32, clipped to [0, 255] and
// truncated.
func blendLevel(deg, v uint8, alpha float32) uint8 {
	t := float32(deg) + float32(alpha*float32(int(v)-int(deg)))
	if t <= 0 {
		return 0
	}
	if t >= 255 {
		return 255
	}
	return uint8(t)
}

// blendLevels sets dst[i] = blendLevel(deg[i], src[i], alpha):
// blendLevelsGeneric, or its AVX2 version (the same levels) where the
// processor has AVX2. dst may be src.
var blendLevels = blendLevelsGeneric

func blendLevelsGeneric(dst, deg, src []uint8, alpha float32) {
	dst, deg = dst[:len(src)], deg[:len(src)]
	for i, v := range src {
		dst[i] = blendLevel(deg[i], v, alpha)
	}
}

// greyLevel is PIL's RGB to L conversion of one pixel (ITU-R 601-2 in
// 16-bit fixed point, rounded).
func greyLevel(r, g, b uint8) uint8 {
	return uint8((uint32(r)*19595 + uint32(g)*38470 + uint32(b)*7471 + 0x8000) >> 16)
}

// colorLevels blends each pixel with its grey level (ImageEnhance.Color);
// single-channel images are unchanged. In place.
func colorLevels(img levelImage, factor float64) levelImage {
	if img.C != 3 {
		return img
	}
	r, g, b := img.Plane(0), img.Plane(1), img.Plane(2)
	grey := levelPool.get(len(r))
	defer levelPool.put(grey)
	g, b = g[:len(r)], b[:len(r)]
	for i := range grey {
		grey[i] = greyLevel(r[i], g[i], b[i])
	}
	f := float32(factor)
	for _, p := range [][]uint8{r, g, b} {
		blendLevels(p, grey, p, f)
	}
	return img
}

// contrastLevels blends the image with its mean grey level, rounded
// (ImageEnhance.Contrast). In place.
func contrastLevels(img levelImage, factor float64) levelImage {
	sum := 0
	if img.C == 3 {
		r, g, b := img.Plane(0), img.Plane(1), img.Plane(2)
		for i := range r {
			sum += int(greyLevel(r[i], g[i], b[i]))
		}
	} else {
		for _, l := range img.Plane(0) {
			sum += int(l)
		}
	}
	mean := uint8(min(int(float64(sum)/float64(img.H*img.W)+0.5), 255))
	f := float32(factor)
	var lut [256]uint8
	for i := range lut {
		lut[i] = blendLevel(mean, uint8(i), f)
	}
	return mapLevels(img, &lut)
}

// brightnessLevels blends the image with black
// (ImageEnhance.Brightness). In place.
func brightnessLevels(img levelImage, factor float64) levelImage {
	f := float32(factor)
	var lut [256]uint8
	for i := range lut {
		lut[i] = blendLevel(0, uint8(i), f)
	}
	return mapLevels(img, &lut)
}

// sharpnessLevels blends the image with PIL's SMOOTH-filtered copy (3×3
// kernel [1 1 1; 1 5 1; 1 1 1]/13 rounded to a level, border pixels
// unchanged) (ImageEnhance.Sharpness). In place, one row of the image
// behind.
func sharpnessLevels(img levelImage, factor float64) levelImage {
	if img.H < 3 || img.W < 3 {
		return img
	}
	f := float32(factor)
	w := img.W
	rows := levelPool.get(3 * w) // the unfiltered rows y-1 and y, and row y smoothed
	defer levelPool.put(rows)
	up, mid, smooth := rows[:w], rows[w:2*w], rows[2*w:3*w]
	for c := range img.C {
		p := img.Plane(c)
		copy(up, p[:w])
		for y := 1; y < img.H-1; y++ {
			copy(mid, p[y*w:(y+1)*w])
			down := p[(y+1)*w : (y+2)*w]
			smoothRow(smooth, up, mid, down)
			blendLevels(p[y*w+1:(y+1)*w-1], smooth[1:w-1], mid[1:w-1], f)
			up, mid = mid, up
		}
	}
	return img
}

// smoothRow sets smooth[x], 0 < x < len(mid)-1, to PIL's SMOOTH filter of
// the 3×3 levels around mid[x] (weights 1, centre 5, divided by 13 and
// rounded half up): each column's sum of the three rows once, then three
// column sums and four more of the centre.
func smoothRow(smooth, up, mid, down []uint8) {
	w := len(mid)
	up, down, smooth = up[:w], down[:w], smooth[:w]
	left := uint32(up[0]) + uint32(mid[0]) + uint32(down[0])
	centre := uint32(up[1]) + uint32(mid[1]) + uint32(down[1])
	for x := 1; x < w-1; x++ {
		right := uint32(up[x+1]) + uint32(mid[x+1]) + uint32(down[x+1])
		s := left + centre + right + 4*uint32(mid[x])
		smooth[x] = uint8((2*s + 13) / 26)
		left, centre = centre, right
	}
}
