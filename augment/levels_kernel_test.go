package augment

import (
	"math"
	"slices"
	"testing"
)

// TestLevelsOfMatchesGeneric checks that levelsOf (the AVX2 version where
// the processor has it) gives levelsOfGeneric's levels for every length up
// to 100, values in and out of [0, 1], the halfway points between levels
// and their float32 neighbours.
func TestLevelsOfMatchesGeneric(t *testing.T) {
	rng := newRNG(21)
	var special []float32
	for l := range 256 {
		h := (float32(l) + 0.5) / 255
		special = append(special, h, math.Nextafter32(h, 0), math.Nextafter32(h, 2), float32(l)/255)
	}
	special = append(special, -1, -0.001, 0, 1, 1.001, 7, 1e9, -1e9, 1e30, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()))
	for n := range 101 {
		src := make([]float32, n)
		for i := range src {
			src[i] = rng.Float32()*1.4 - 0.2
			if rng.IntN(3) == 0 {
				src[i] = special[rng.IntN(len(special))]
			}
		}
		want, got := make([]uint8, n), make([]uint8, n)
		levelsOfGeneric(want, src)
		levelsOf(got, src)
		if !slices.Equal(got, want) {
			t.Fatalf("%d values %v: got %v, want %v", n, src, got, want)
		}
	}
	all := make([]uint8, len(special))
	levelsOf(all, special)
	for i, v := range special {
		if int(all[i]) != levelOf(v) {
			t.Errorf("level of %v = %d, want %d", v, all[i], levelOf(v))
		}
	}
}

// TestNormLevelsMatchesNormalize checks that normLevels (the AVX2 version
// where the processor has it) gives, for every level and every length up
// to 60, the value normalize gives the level's value, with ImageNet's
// means and stds, none, and a few others.
func TestNormLevelsMatchesNormalize(t *testing.T) {
	rng := newRNG(22)
	for _, ms := range [][2]float32{{0.485, 0.229}, {0.456, 0.224}, {0.406, 0.225}, {0, 1}, {0.5, 0.5}, {-3, 1e-3}} {
		m, inv := ms[0], 1/ms[1]
		for n := range 61 {
			src := make([]uint8, n)
			for i := range src {
				src[i] = uint8(rng.IntN(256))
			}
			if n == 0 {
				src = make([]uint8, 256)
				for i := range src {
					src[i] = uint8(i)
				}
			}
			img := Image{C: 1, H: 1, W: len(src), Pix: make([]float32, len(src))}
			for i, l := range src {
				img.Pix[i] = levelValue[l]
			}
			want, got := make([]float32, len(src)), make([]float32, len(src))
			if err := normalize(img, []float32{m}, []float32{ms[1]}, want); err != nil {
				t.Fatal(err)
			}
			normLevels(got, src, m, inv)
			if !slices.Equal(got, want) {
				t.Fatalf("mean %v std %v, levels %v: got %v, want %v", m, ms[1], src, got, want)
			}
		}
	}
}

// TestRows8LevelsMatchesGeneric checks that rows8Levels (the AVX2 version
// where the processor has it) interleaves eight rows of levels as
// rows8LevelsGeneric does, for every width up to 70 and strides past it.
func TestRows8LevelsMatchesGeneric(t *testing.T) {
	rng := newRNG(23)
	for n := 1; n <= 70; n++ {
		stride := n + rng.IntN(9)
		pix := make([]byte, 7*stride+n)
		for i := range pix {
			pix[i] = uint8(rng.IntN(256))
		}
		want, got := make([]float32, 8*n), make([]float32, 8*n)
		rows8LevelsGeneric(want, pix, n, stride)
		rows8Levels(got, pix, n, stride)
		if !slices.Equal(got, want) {
			t.Fatalf("width %d, stride %d: got %v, want %v", n, stride, got, want)
		}
	}
	// Every level in each of the eight rows: its value, level/255.
	pix := make([]byte, 8*256)
	for i := range pix {
		pix[i] = uint8(i + i/256*32)
	}
	got := make([]float32, 8*256)
	rows8Levels(got, pix, 256, 256)
	for x := range 256 {
		for r := range 8 {
			if l := pix[r*256+x]; got[x*8+r] != float32(l)/255 {
				t.Fatalf("level %d: %v, want %v", l, got[x*8+r], float32(l)/255)
			}
		}
	}
}

// TestNormFloatsMatchesGeneric checks that normFloats (the AVX2 version
// where the processor has it) gives normFloatsGeneric's values for every
// length up to 60.
func TestNormFloatsMatchesGeneric(t *testing.T) {
	rng := newRNG(24)
	for n := range 61 {
		src := make([]float32, n)
		for i := range src {
			src[i] = rng.Float32()*1.4 - 0.2
		}
		want, got := make([]float32, n), make([]float32, n)
		normFloatsGeneric(want, src, 0.485, 1/float32(0.229))
		normFloats(got, src, 0.485, 1/float32(0.229))
		if !slices.Equal(got, want) {
			t.Fatalf("%d values: got %v, want %v", n, got, want)
		}
	}
}

// TestBlendLevelsMatchesGeneric checks that blendLevels (the AVX2 version
// where the processor has it) gives blendLevelsGeneric's levels for every
// pair of levels, at factors inside and outside [0, 1] and RandAugment's
// extremes, on lengths that are not multiples of 8.
func TestBlendLevelsMatchesGeneric(t *testing.T) {
	deg, src := make([]uint8, 65536+5), make([]uint8, 65536+5)
	for i := range 65536 {
		deg[i], src[i] = uint8(i>>8), uint8(i)
	}
	for _, alpha := range []float32{0, 0.1, 0.37, 0.5, 0.999, 1, 1.3, 1.72, 1.9, 2.5} {
		want, got := make([]uint8, len(src)), make([]uint8, len(src))
		blendLevelsGeneric(want, deg, src, alpha)
		blendLevels(got, deg, src, alpha)
		if !slices.Equal(got, want) {
			t.Fatalf("alpha %v: the blends differ", alpha)
		}
	}
}

// TestMapLevels checks that mapLevels maps every level through the table,
// for every length up to 40 (the eight-level loads and the tail).
func TestMapLevels(t *testing.T) {
	rng := newRNG(33)
	var lut [256]uint8
	for i := range lut {
		lut[i] = uint8(rng.IntN(256))
	}
	for n := range 41 {
		pix := make([]uint8, n)
		for i := range pix {
			pix[i] = uint8(rng.IntN(256))
		}
		want := make([]uint8, n)
		for i, l := range pix {
			want[i] = lut[l]
		}
		got := mapLevels(levelImage{C: 1, H: 1, W: n, Pix: pix}, &lut)
		if !slices.Equal(got.Pix, want) {
			t.Fatalf("length %d: got %v, want %v", n, got.Pix, want)
		}
	}
}

// TestSmoothRow checks smoothRow against PIL's SMOOTH filter written out
// tap by tap, for every width from 3 to 40 and rows of extreme levels.
func TestSmoothRow(t *testing.T) {
	rng := newRNG(34)
	for w := 3; w <= 40; w++ {
		rows := make([][]uint8, 3)
		for r := range rows {
			rows[r] = make([]uint8, w)
			for x := range rows[r] {
				switch w % 3 {
				case 0:
					rows[r][x] = uint8(rng.IntN(256))
				case 1:
					rows[r][x] = 255
				default:
					rows[r][x] = uint8(255 * rng.IntN(2))
				}
			}
		}
		up, mid, down := rows[0], rows[1], rows[2]
		got := make([]uint8, w)
		smoothRow(got, up, mid, down)
		for x := 1; x < w-1; x++ {
			s := int(up[x-1]) + int(up[x]) + int(up[x+1]) + int(mid[x-1]) + 5*int(mid[x]) + int(mid[x+1]) +
				int(down[x-1]) + int(down[x]) + int(down[x+1])
			if want := uint8((2*s + 13) / 26); got[x] != want {
				t.Fatalf("width %d, x %d: %d, want %d (rows %v %v %v)", w, x, got[x], want, up, mid, down)
			}
		}
	}
}

// TestMaskLevelsAndHistogram checks maskLevels against l&and ^ xor and
// levelHistogram against a count one level at a time, for every length up
// to 40 (the eight- and four-level steps and their tails) and long runs
// of one level.
func TestMaskLevelsAndHistogram(t *testing.T) {
	rng := newRNG(35)
	for n := range 41 {
		pix := make([]uint8, n)
		for i := range pix {
			pix[i] = uint8(rng.IntN(256))
			if n%3 == 0 {
				pix[i] = 200
			}
		}
		var want [256]int
		for _, l := range pix {
			want[l]++
		}
		if got := levelHistogram(pix); got != want {
			t.Fatalf("length %d: histogram %v, want %v", n, got, want)
		}
		for _, m := range [][2]uint8{{0xff, 0xff}, {0xe0, 0}, {0x80, 0x5a}} {
			got := slices.Clone(pix)
			maskLevels(got, m[0], m[1])
			for i, l := range pix {
				if want := l&m[0] ^ m[1]; got[i] != want {
					t.Fatalf("length %d, and %#x xor %#x: level %d gives %d, want %d", n, m[0], m[1], l, got[i], want)
				}
			}
		}
	}
}
