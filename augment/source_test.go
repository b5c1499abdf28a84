package augment

import (
	"math/rand/v2"
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
	ps := newSourcePipelines(t)
	alone := Pipeline{Transform: NewRandomResizedCrop(24, RandomInterp), Height: 24, Width: 24}
	mean, std := []float32{0.485, 0.456, 0.406}, []float32{0.229, 0.224, 0.225}
	cifar, err := TrainPipeline(DeiTTrainConfig(32, mean, std)) // pad-crop: the whole image
	if err != nil {
		t.Fatal(err)
	}
	img := randomImage(newRNG(1), 3, 75, 100)
	for _, c := range []struct {
		name string
		p    Pipeline
		crop bool // whether only a crop should be converted
	}{{"deit", ps.deit, true}, {"rrc-flip", ps.rrc, true}, {"rrc alone", alone, true}, {"eval", ps.eval, false}, {"cifar", cifar, false}, {"random resize", ps.randomResize, false}} {
		converted := 0
		for seed := range uint64(20) {
			src := &planeSource{img: img}
			sameResults(t, c.name+": ProcessSource against Process", c.p, seed,
				func(r *rand.Rand, dst []float32) error { return c.p.Process(img.Clone(), r, dst) },
				func(r *rand.Rand, dst []float32) error { return c.p.ProcessSource(src, r, dst) })
			converted += src.converted
		}
		whole := 20 * img.H * img.W
		if c.crop && converted >= whole || !c.crop && converted != whole {
			t.Errorf("%s: converted %d pixels over 20 images of %d", c.name, converted, img.H*img.W)
		}
	}
}
