package augment

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// newRNG returns a deterministic stream for tests.
func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }

// randomImage returns a (c, h, w) image of uniform values on the 1/255 grid.
func randomImage(rng *rand.Rand, c, h, w int) Image {
	img := Image{C: c, H: h, W: w, Pix: make([]float32, c*h*w)}
	for i := range img.Pix {
		img.Pix[i] = float32(rng.IntN(256)) / 255
	}
	return img
}

// imageFrom builds an image from a function of (c, y, x).
func imageFrom(c, h, w int, f func(c, y, x int) float32) Image {
	img := Image{C: c, H: h, W: w, Pix: make([]float32, c*h*w)}
	for ch := 0; ch < c; ch++ {
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				img.Pix[(ch*h+y)*w+x] = f(ch, y, x)
			}
		}
	}
	return img
}

func at(img Image, c, y, x int) float32 { return img.Pix[(c*img.H+y)*img.W+x] }

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func assertNear(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if !near(got, want, tol) {
		t.Errorf("%s = %.6g, want %.6g (±%g)", what, got, want, tol)
	}
}

// meanStd returns the sample mean and standard deviation.
func meanStd(xs []float64) (mean, std float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		std += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(std / float64(len(xs)-1))
}

// sourcePipelines are the pipelines the source tests run on 3-channel
// images: DeiT's training pipeline at 48, RandomResizedCrop and flip at
// 32, the evaluation pipeline at 32, and a resize of random filter (drawn
// once, as Apply does) to 40 with a centre crop of 32.
type sourcePipelines struct{ deit, rrc, eval, randomResize Pipeline }

func newSourcePipelines(t *testing.T) sourcePipelines {
	t.Helper()
	mean, std := []float32{0.485, 0.456, 0.406}, []float32{0.229, 0.224, 0.225}
	var s sourcePipelines
	var err error
	if s.deit, err = TrainPipeline(DeiTTrainConfig(48, mean, std)); err != nil {
		t.Fatal(err)
	}
	if s.rrc, err = TrainPipeline(TrainConfig{Size: 32, HFlip: 0.5, Interp: Bicubic, Mean: mean, Std: std}); err != nil {
		t.Fatal(err)
	}
	if s.eval, err = EvalPipeline(EvalConfig{Size: 32, CropPct: 0.875, Interp: Bicubic, Mean: mean, Std: std}); err != nil {
		t.Fatal(err)
	}
	s.randomResize = Pipeline{Transform: Compose(Resize{Size: 40, Interp: RandomInterp}, CenterCrop{H: 32, W: 32}), Height: 32, Width: 32}
	return s
}

// sameResults fails unless want and got, each run with a stream from
// seed, write the same values for p and leave their streams alike.
func sameResults(t *testing.T, what string, p Pipeline, seed uint64, want, got func(r *rand.Rand, dst []float32) error) {
	t.Helper()
	w, g := make([]float32, 3*p.Height*p.Width), make([]float32, 3*p.Height*p.Width)
	r1, r2 := newRNG(seed), newRNG(seed)
	if err := want(r1, w); err != nil {
		t.Fatal(err)
	}
	if err := got(r2, g); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(g, w) {
		t.Fatalf("%s, seed %d: the results differ", what, seed)
	}
	if r1.Uint64() != r2.Uint64() {
		t.Fatalf("%s, seed %d: the random streams diverged", what, seed)
	}
}
