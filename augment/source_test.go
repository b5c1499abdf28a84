package augment

import (
	"slices"
	"testing"
)

// planeSource is a Source over a float image that records the area of
// every region converted.
type planeSource struct {
	img       Image
	converted int
}

func (s *planeSource) Size() (c, h, w int) { return s.img.C, s.img.H, s.img.W }

func (s *planeSource) Region(top, left, h, w int) Image {
	s.converted += h * w
	out := NewImage(s.img.C, h, w)
	for c := range s.img.C {
		for y := range h {
			copy(out.Pix[(c*h+y)*w:(c*h+y+1)*w], s.img.Pix[(c*s.img.H+top+y)*s.img.W+left:][:w])
		}
	}
	return out
}

// ProcessSource gives Process's result bit for bit, with the same draws,
// for a pipeline that starts with RandomResizedCrop (converting the crop
// alone) and for one that does not (converting the whole image).
func TestProcessSourceMatchesProcess(t *testing.T) {
	mean, std := []float32{0.485, 0.456, 0.406}, []float32{0.229, 0.224, 0.225}
	deit, err := TrainPipeline(DeiTTrainConfig(48, mean, std))
	if err != nil {
		t.Fatal(err)
	}
	rrc, err := TrainPipeline(TrainConfig{Size: 32, HFlip: 0.5, Interp: Bicubic, Mean: mean, Std: std})
	if err != nil {
		t.Fatal(err)
	}
	alone := Pipeline{Transform: NewRandomResizedCrop(24, RandomInterp), Height: 24, Width: 24}
	eval, err := EvalPipeline(EvalConfig{Size: 32, CropPct: 0.875, Interp: Bicubic, Mean: mean, Std: std})
	if err != nil {
		t.Fatal(err)
	}
	cifar, err := TrainPipeline(DeiTTrainConfig(32, mean, std)) // pad-crop: the whole image
	if err != nil {
		t.Fatal(err)
	}
	randomResize := Pipeline{Transform: Compose(Resize{Size: 40, Interp: RandomInterp}, CenterCrop{H: 32, W: 32}), Height: 32, Width: 32}
	img := randomImage(newRNG(1), 3, 75, 100)
	for _, c := range []struct {
		name string
		p    Pipeline
		crop bool // whether only a crop should be converted
	}{{"deit", deit, true}, {"rrc-flip", rrc, true}, {"rrc alone", alone, true}, {"eval", eval, false}, {"cifar", cifar, false}, {"random resize", randomResize, false}} {
		converted := 0
		for seed := range uint64(20) {
			want := make([]float32, 3*c.p.Height*c.p.Width)
			got := make([]float32, len(want))
			r1, r2 := newRNG(seed), newRNG(seed)
			if err := c.p.Process(img.Clone(), r1, want); err != nil {
				t.Fatal(err)
			}
			src := &planeSource{img: img}
			if err := c.p.ProcessSource(src, r2, got); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%s, seed %d: ProcessSource differs from Process", c.name, seed)
			}
			if r1.Uint64() != r2.Uint64() {
				t.Fatalf("%s, seed %d: the random streams diverged", c.name, seed)
			}
			converted += src.converted
		}
		whole := 20 * img.H * img.W
		if c.crop && converted >= whole || !c.crop && converted != whole {
			t.Errorf("%s: converted %d pixels over 20 images of %d", c.name, converted, img.H*img.W)
		}
	}
}
