package vit

import (
	"fmt"
	"math"
)

// Interpolation selects the filter used to resample position embeddings.
type Interpolation string

const (
	// Bicubic is PyTorch's F.interpolate(mode='bicubic', antialias=True):
	// PIL's cubic filter (a = −0.5), widened when shrinking. timm's default.
	Bicubic Interpolation = "bicubic"
	// Bilinear is F.interpolate(mode='bilinear', antialias=True): a triangle
	// filter, widened when shrinking.
	Bilinear Interpolation = "bilinear"
)

// ResamplePosEmbed resamples position embeddings for a new patch grid, as
// timm's resample_abs_pos_embed: the first prefix rows (cls, dist) are kept
// as they are; the patch rows, read as an (oldH, oldW, D) grid, are resized
// to (newH, newW, D) and flattened back. pos is (prefix + oldH·oldW, D)
// row-major; the result is (prefix + newH·newW, D).
func ResamplePosEmbed(pos []float32, d, prefix, oldH, oldW, newH, newW int, method Interpolation) ([]float32, error) {
	if d <= 0 || prefix < 0 || oldH <= 0 || oldW <= 0 || newH <= 0 || newW <= 0 {
		return nil, fmt.Errorf("resample pos_embed: invalid sizes d=%d prefix=%d old=%dx%d new=%dx%d", d, prefix, oldH, oldW, newH, newW)
	}
	if want := (prefix + oldH*oldW) * d; len(pos) != want {
		return nil, fmt.Errorf("resample pos_embed: %d values, want (%d + %d×%d)×%d = %d", len(pos), prefix, oldH, oldW, d, want)
	}
	var filter func(float64) float64
	var support float64
	switch method {
	case Bicubic, "":
		filter, support = cubicAA, 2
	case Bilinear:
		filter, support = triangle, 1
	default:
		return nil, fmt.Errorf("resample pos_embed: unknown interpolation %q (want bicubic or bilinear)", method)
	}
	out := make([]float32, (prefix+newH*newW)*d)
	copy(out, pos[:prefix*d])
	grid := make([]float64, oldH*oldW*d)
	for i, v := range pos[prefix*d:] {
		grid[i] = float64(v)
	}
	// Width first, then height; each pass is a weighted sum over a window.
	wx := aaWeights(oldW, newW, filter, support)
	tmp := make([]float64, oldH*newW*d)
	for y := 0; y < oldH; y++ {
		for x := 0; x < newW; x++ {
			dst := tmp[(y*newW+x)*d:][:d]
			for _, t := range wx[x] {
				src := grid[(y*oldW+t.index)*d:][:d]
				for k := range dst {
					dst[k] += t.weight * src[k]
				}
			}
		}
	}
	wy := aaWeights(oldH, newH, filter, support)
	res := out[prefix*d:]
	acc := make([]float64, d)
	for y := 0; y < newH; y++ {
		for x := 0; x < newW; x++ {
			clear(acc)
			for _, t := range wy[y] {
				src := tmp[(t.index*newW+x)*d:][:d]
				for k := range acc {
					acc[k] += t.weight * src[k]
				}
			}
			dst := res[(y*newW+x)*d:][:d]
			for k, v := range acc {
				dst[k] = float32(v)
			}
		}
	}
	return out, nil
}

type tap struct {
	index  int
	weight float64
}

// aaWeights computes, for each output position, the input taps and
// normalised weights of PyTorch's antialiased interpolation (the algorithm
// of PIL's ImagingResample): centre scale·(i+0.5), window ±support·max(scale, 1)
// clipped to the input, filter argument scaled by 1/max(scale, 1).
func aaWeights(in, out int, filter func(float64) float64, support float64) [][]tap {
	scale := float64(in) / float64(out)
	invScale := 1.0
	if scale >= 1 {
		support *= scale
		invScale = 1 / scale
	}
	taps := make([][]tap, out)
	for i := range taps {
		center := scale * (float64(i) + 0.5)
		lo := max(int(center-support+0.5), 0)
		hi := min(int(center+support+0.5), in)
		total := 0.0
		for j := lo; j < hi; j++ {
			w := filter((float64(j) - center + 0.5) * invScale)
			taps[i] = append(taps[i], tap{j, w})
			total += w
		}
		if total != 0 {
			for k := range taps[i] {
				taps[i][k].weight /= total
			}
		}
	}
	return taps
}

// cubicAA is the cubic convolution kernel with a = −0.5 (PIL, PyTorch antialias).
func cubicAA(x float64) float64 {
	const a = -0.5
	x = math.Abs(x)
	switch {
	case x < 1:
		return ((a+2)*x-(a+3))*x*x + 1
	case x < 2:
		return (((x-5)*x+8)*x - 4) * a
	}
	return 0
}

func triangle(x float64) float64 { return max(0, 1-math.Abs(x)) }
