package augment

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// byteSource is a ByteSource over planar bytes whose reduced images are
// the box averages of f×f squares (rounded), as a JPEG's DCT scaling
// approximately gives them.
type byteSource struct {
	c, h, w int
	pix     []byte
	max     int
}

func (s *byteSource) Size() (c, h, w int) { return s.c, s.h, s.w }
func (s *byteSource) MaxReduction() int   { return s.max }
func (s *byteSource) ReducedSize(f int) (h, w int) {
	return (s.h + f - 1) / f, (s.w + f - 1) / f
}

func (s *byteSource) Region(top, left, h, w int) Image {
	img := NewImage(s.c, h, w)
	for c := range s.c {
		for y := range h {
			for x := range w {
				img.Pix[(c*h+y)*w+x] = ByteValue(s.pix[(c*s.h+top+y)*s.w+left+x])
			}
		}
	}
	return img
}

func (s *byteSource) RegionBytes(dst []byte, top, left, h, w, f int) {
	for c := range s.c {
		for y := range h {
			for x := range w {
				sum, n := 0, 0
				for yy := (top + y) * f; yy < min((top+y+1)*f, s.h); yy++ {
					for xx := (left + x) * f; xx < min((left+x+1)*f, s.w); xx++ {
						sum += int(s.pix[(c*s.h+yy)*s.w+xx])
						n++
					}
				}
				dst[(c*h+y)*w+x] = byte((sum + n/2) / n)
			}
		}
	}
}

// smoothBytes returns a (3, h, w) byte image of gradients and ripples.
func smoothBytes(h, w int) []byte {
	pix := make([]byte, 3*h*w)
	for c := range 3 {
		for y := range h {
			for x := range w {
				v := 128 + 60*math.Sin(float64(x)/(17+float64(c)))*math.Cos(float64(y)/23) + 50*float64(x-y)/float64(w+h)
				pix[(c*h+y)*w+x] = byte(min(max(v, 0), 255))
			}
		}
	}
	return pix
}

// ProcessSource on a ByteSource read at full size gives Process's result
// on the converted image bit for bit, with the same draws, for the train
// pipelines (crop, resize and flip in one pass over the bytes) and the
// evaluation one (resize from the bytes).
func TestByteSourceMatchesProcess(t *testing.T) {
	ps := newSourcePipelines(t)
	src := &byteSource{c: 3, h: 75, w: 100, pix: smoothBytes(75, 100), max: 1}
	img := Whole(src)
	for _, c := range []struct {
		name string
		p    Pipeline
	}{{"deit", ps.deit}, {"rrc-flip", ps.rrc}, {"eval", ps.eval}, {"random resize", ps.randomResize}} {
		for seed := range uint64(20) {
			sameResults(t, c.name+": ProcessSource against Process", c.p, seed,
				func(r *rand.Rand, dst []float32) error { return c.p.Process(img.Clone(), r, dst) },
				func(r *rand.Rand, dst []float32) error { return c.p.ProcessSource(src, r, dst) })
		}
	}
}

// planesSource is byteSource with its planes read in place (BytePlanes).
type planesSource struct{ *byteSource }

func (s planesSource) Planes() []byte { return s.pix }

// A BytePlanes source read in place gives what its RegionBytes copies
// give, with the same draws: DeiT's crops and the evaluation pipeline on
// wide, tall and near-square images, and a centre window of a resize.
func TestBytePlanesMatchRegionBytes(t *testing.T) {
	ps := newSourcePipelines(t)
	for _, size := range [][2]int{{75, 100}, {60, 200}, {210, 50}} {
		copied := &byteSource{c: 3, h: size[0], w: size[1], pix: smoothBytes(size[0], size[1]), max: 1}
		for _, c := range []struct {
			name string
			p    Pipeline
		}{{"deit", ps.deit}, {"eval", ps.eval}} {
			for seed := range uint64(40) {
				sameResults(t, fmt.Sprintf("%s, %d × %d: the planes read in place against RegionBytes's copy", c.name, size[0], size[1]), c.p, seed,
					func(r *rand.Rand, dst []float32) error { return c.p.ProcessSource(copied, r, dst) },
					func(r *rand.Rand, dst []float32) error { return c.p.ProcessSource(planesSource{copied}, r, dst) })
			}
		}
		// A centre window of a resize, which reads an inner span of rows
		// and columns.
		r := Resize{Size: 40, Interp: Bicubic}
		want := r.applySource(copied, newRNG(1), &CenterCrop{H: 24, W: 24})
		got := r.applySource(planesSource{copied}, newRNG(1), &CenterCrop{H: 24, W: 24})
		if !slices.Equal(got.Pix, want.Pix) {
			t.Fatalf("%d × %d: a window of a resize read in place differs from RegionBytes's copy", size[0], size[1])
		}
	}
}

// reducedTol bounds the mean absolute difference, in 8-bit levels, between
// a crop or resize read from a reduced image and the same read at full
// size (0.28 to 0.37 here): the reduced image's squares average what the
// antialiasing filter would, a little differently.
const reducedTol = 0.5

// TestReducedReadsCloseToFullSize checks RandomResizedCrop and Resize on a
// ByteSource that reduces by up to 8 against the same at full size, and
// that the reduction is used only where the region keeps the output size.
func TestReducedReadsCloseToFullSize(t *testing.T) {
	pix := smoothBytes(600, 800)
	full := &byteSource{c: 3, h: 600, w: 800, pix: pix, max: 1}
	reduced := &byteSource{c: 3, h: 600, w: 800, pix: pix, max: 8}
	for _, c := range []struct {
		name string
		t    SourceTransform
	}{
		{"rrc 64", RandomResizedCrop{H: 64, W: 64, Scale: [2]float64{0.08, 1}, Ratio: [2]float64{3. / 4, 4. / 3}, Interp: Bicubic}},
		{"resize 73", Resize{Size: 73, Interp: Bicubic}},
		{"resize 300", Resize{Size: 300, Interp: Bilinear}},
	} {
		var sum float64
		n := 0
		for seed := range uint64(10) {
			want := c.t.ApplySource(full, newRNG(seed))
			got := c.t.ApplySource(reduced, newRNG(seed))
			if got.C != want.C || got.H != want.H || got.W != want.W {
				t.Fatalf("%s: %dx%d, want %dx%d", c.name, got.H, got.W, want.H, want.W)
			}
			for i, v := range got.Pix {
				sum += math.Abs(float64(v-want.Pix[i])) * 255
				n++
			}
		}
		if mean := sum / float64(n); mean > reducedTol {
			t.Errorf("%s: reduced reads differ by %.2f levels on average (tolerance %v)", c.name, mean, reducedTol)
		}
	}
	for _, c := range []struct{ h, w, outH, outW, max, want int }{
		{600, 800, 64, 64, 8, 8}, {600, 800, 64, 64, 4, 4}, {300, 800, 64, 64, 8, 4},
		{127, 500, 64, 64, 8, 1}, {128, 128, 64, 64, 8, 2}, {600, 800, 224, 224, 8, 2}, {600, 800, 64, 64, 1, 1},
	} {
		if got := reduction(c.h, c.w, c.outH, c.outW, c.max); got != c.want {
			t.Errorf("reduction(%d×%d to %d×%d, max %d) = %d, want %d", c.h, c.w, c.outH, c.outW, c.max, got, c.want)
		}
	}
}
