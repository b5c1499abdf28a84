package augment

import (
	"math"
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
	mean, std := []float32{0.485, 0.456, 0.406}, []float32{0.229, 0.224, 0.225}
	deit, err := TrainPipeline(DeiTTrainConfig(48, mean, std))
	if err != nil {
		t.Fatal(err)
	}
	rrc, err := TrainPipeline(TrainConfig{Size: 32, HFlip: 0.5, Interp: Bicubic, Mean: mean, Std: std})
	if err != nil {
		t.Fatal(err)
	}
	eval, err := EvalPipeline(EvalConfig{Size: 32, CropPct: 0.875, Interp: Bicubic, Mean: mean, Std: std})
	if err != nil {
		t.Fatal(err)
	}
	// A resize of random filter draws it once, as Apply does.
	randomResize := Pipeline{Transform: Compose(Resize{Size: 40, Interp: RandomInterp}, CenterCrop{H: 32, W: 32}), Height: 32, Width: 32}
	src := &byteSource{c: 3, h: 75, w: 100, pix: smoothBytes(75, 100), max: 1}
	img := Whole(src)
	for _, c := range []struct {
		name string
		p    Pipeline
	}{{"deit", deit}, {"rrc-flip", rrc}, {"eval", eval}, {"random resize", randomResize}} {
		for seed := range uint64(20) {
			want := make([]float32, 3*c.p.Height*c.p.Width)
			got := make([]float32, len(want))
			r1, r2 := newRNG(seed), newRNG(seed)
			if err := c.p.Process(img.Clone(), r1, want); err != nil {
				t.Fatal(err)
			}
			if err := c.p.ProcessSource(src, r2, got); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%s, seed %d: ProcessSource differs from Process", c.name, seed)
			}
			if r1.Uint64() != r2.Uint64() {
				t.Fatalf("%s, seed %d: the random streams diverged", c.name, seed)
			}
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
	mean, std := []float32{0.485, 0.456, 0.406}, []float32{0.229, 0.224, 0.225}
	deit, err := TrainPipeline(DeiTTrainConfig(48, mean, std))
	if err != nil {
		t.Fatal(err)
	}
	eval, err := EvalPipeline(EvalConfig{Size: 32, CropPct: 0.875, Interp: Bicubic, Mean: mean, Std: std})
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range [][2]int{{75, 100}, {60, 200}, {210, 50}} {
		copied := &byteSource{c: 3, h: size[0], w: size[1], pix: smoothBytes(size[0], size[1]), max: 1}
		comparePlanes(t, copied, planesSource{copied}, deit, eval)
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

func comparePlanes(t *testing.T, copied *byteSource, inPlace planesSource, deit, eval Pipeline) {
	t.Helper()
	for _, c := range []struct {
		name string
		p    Pipeline
	}{{"deit", deit}, {"eval", eval}} {
		for seed := range uint64(40) {
			want := make([]float32, 3*c.p.Height*c.p.Width)
			got := make([]float32, len(want))
			r1, r2 := newRNG(seed), newRNG(seed)
			if err := c.p.ProcessSource(copied, r1, want); err != nil {
				t.Fatal(err)
			}
			if err := c.p.ProcessSource(inPlace, r2, got); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%s, %d × %d, seed %d: the planes read in place differ from RegionBytes's copy", c.name, copied.h, copied.w, seed)
			}
			if r1.Uint64() != r2.Uint64() {
				t.Fatalf("%s, seed %d: the random streams diverged", c.name, seed)
			}
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
