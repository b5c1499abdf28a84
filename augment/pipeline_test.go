package augment

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestPipelineNormalise(t *testing.T) {
	img := Image{C: 2, H: 1, W: 2, Pix: []float32{0.5, 1, 0, 0.25}}
	p := Pipeline{Mean: []float32{0.5, 0.25}, Std: []float32{0.5, 0.25}}
	dst := make([]float32, 4)
	if err := p.Process(img, newRNG(1), dst); err != nil {
		t.Fatal(err)
	}
	want := []float32{0, 1, -1, 0}
	for i := range want {
		if dst[i] != want[i] {
			t.Fatalf("normalised %v, want %v", dst, want)
		}
	}
}

func TestPipelinePostNormSeesNormalisedValues(t *testing.T) {
	var seen []float32
	p := Pipeline{
		Mean: []float32{0.5}, Std: []float32{0.5},
		PostNorm: Func(func(img Image, _ *rand.Rand) Image {
			seen = append(seen, img.Pix...)
			img.Pix[0] = 42
			return img
		}),
	}
	dst := make([]float32, 2)
	if err := p.Process(Image{C: 1, H: 1, W: 2, Pix: []float32{1, 0}}, newRNG(1), dst); err != nil {
		t.Fatal(err)
	}
	if seen[0] != 1 || seen[1] != -1 || dst[0] != 42 || dst[1] != -1 {
		t.Errorf("PostNorm saw %v, dst %v", seen, dst)
	}
}

func TestPipelineErrors(t *testing.T) {
	dst := make([]float32, 12)
	for name, tc := range map[string]struct {
		p    Pipeline
		img  Image
		want string
	}{
		"size":     {Pipeline{Height: 3, Width: 3}, Image{C: 3, H: 2, W: 2, Pix: make([]float32, 12)}, "2x2 image, want 3x3"},
		"dst":      {Pipeline{}, Image{C: 3, H: 2, W: 3, Pix: make([]float32, 18)}, "output holds 12"},
		"channels": {Pipeline{Mean: []float32{0, 0}, Std: []float32{1, 1}}, Image{C: 3, H: 2, W: 2, Pix: make([]float32, 12)}, "2 means and 2 stds for 3 channels"},
		"std":      {Pipeline{Mean: []float32{0}, Std: []float32{0}}, Image{C: 3, H: 2, W: 2, Pix: make([]float32, 12)}, "std[0] = 0"},
	} {
		err := tc.p.Process(tc.img, newRNG(1), dst)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", name, err, tc.want)
		}
	}
}

func TestTrainPipelines(t *testing.T) {
	mean, std := []float32{0.485, 0.456, 0.406}, []float32{0.229, 0.224, 0.225}
	deit, err := TrainPipeline(DeiTTrainConfig(224, mean, std))
	if err != nil {
		t.Fatal(err)
	}
	steps := deit.Transform.(Composed)
	if len(steps) != 3 {
		t.Fatalf("DeiT transform has %d steps: %#v", len(steps), steps)
	}
	rrc, ok1 := steps[0].(RandomResizedCrop)
	_, ok2 := steps[1].(HFlip)
	ra, ok3 := steps[2].(*RandAugment)
	re, ok4 := deit.PostNorm.(RandomErasing)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		t.Fatalf("DeiT steps %#v, post %#v", steps, deit.PostNorm)
	}
	if rrc.Interp != Bicubic || rrc.Scale != [2]float64{0.08, 1} || ra.Magnitude != 9 || re.Prob != 0.25 || re.Mode != ErasePixel {
		t.Errorf("DeiT parameters: %+v %+v %+v", rrc, ra, re)
	}
	// timm's img_mean fill: round(255*mean) = (124, 116, 104)
	if ra.Fill[0] != 124./255 || ra.Fill[1] != 116./255 || ra.Fill[2] != 104./255 {
		t.Errorf("fill %v", ra.Fill)
	}
	dst := make([]float32, 3*224*224)
	if err := deit.Process(randomImage(newRNG(2), 3, 375, 500), newRNG(3), dst); err != nil {
		t.Fatal(err)
	}

	small, err := TrainPipeline(DeiTTrainConfig(32, mean, std))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := small.Transform.(Composed)[1].(RandomCrop); !ok {
		t.Errorf("DeiT 32px pipeline should pad-crop: %#v", small.Transform)
	}
	if err := small.Process(randomImage(newRNG(2), 3, 32, 32), newRNG(3), make([]float32, 3*32*32)); err != nil {
		t.Fatal(err)
	}

	// timm's create_transform training defaults: no auto-augment, no erasing.
	plain, err := TrainPipeline(TrainConfig{Size: 64, HFlip: 0.5, ColorJitter: 0.4, Interp: Bilinear})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := plain.Transform.(Composed)[2].(ColorJitter); !ok || plain.PostNorm != nil {
		t.Errorf("default pipeline: %#v", plain)
	}
	for _, bad := range []TrainConfig{
		{Size: 0},
		{Size: 32, AutoAugment: "original-mstd0.5"},
		{Size: 32, AutoAugment: "rand-x"},
		{Size: 32, Scale: [2]float64{0.5, 0.1}},
		{Size: 32, Crop: CropMode(7)},
	} {
		if _, err := TrainPipeline(bad); err == nil {
			t.Errorf("TrainPipeline(%+v) did not fail", bad)
		}
	}
}

func TestEvalPipeline(t *testing.T) {
	p, err := EvalPipeline(EvalConfig{Size: 224, Interp: Bicubic})
	if err != nil {
		t.Fatal(err)
	}
	steps := p.Transform.(Composed)
	if r := steps[0].(Resize); r.Size != 256 {
		t.Errorf("resize to %d, want 256 = floor(224/0.875)", r.Size)
	}
	// A 500x375 image with a bright centre column band: after Resize(256)
	// (341x256) and CenterCrop(224) the crop covers columns 58..282 of the
	// resized image, so the band stays centred.
	img := imageFrom(3, 375, 500, func(_, _, x int) float32 {
		if x >= 240 && x < 260 {
			return 1
		}
		return 0
	})
	dst := make([]float32, 3*224*224)
	if err := p.Process(img, newRNG(1), dst); err != nil {
		t.Fatal(err)
	}
	left, right := dst[100*224+100], dst[100*224+123]
	if dst[100*224+111] < 0.9 || left > 0.1 || right > 0.1 {
		t.Errorf("band not centred: cols 100/111/123 = %v %v %v", left, dst[100*224+111], right)
	}

	// Small models keep same-size images untouched.
	small, _ := EvalPipeline(EvalConfig{Size: 28, Mean: []float32{0.5}, Std: []float32{0.5}})
	src := randomImage(newRNG(4), 1, 28, 28)
	out := make([]float32, 28*28)
	if err := small.Process(src.Clone(), newRNG(1), out); err != nil {
		t.Fatal(err)
	}
	for i, v := range src.Pix {
		if out[i] != (v-0.5)/0.5 {
			t.Fatalf("value %d: %v, want %v", i, out[i], (v-0.5)/0.5)
		}
	}
	// ... and resize others straight to the model size.
	if err := small.Process(randomImage(newRNG(5), 1, 32, 32), newRNG(1), out); err != nil {
		t.Fatal(err)
	}
	if _, err := EvalPipeline(EvalConfig{Size: 224, CropPct: 1.5}); err == nil {
		t.Error("CropPct 1.5 accepted")
	}
}

func TestPoolReuse(t *testing.T) {
	a := NewImage(3, 10, 10)
	if len(a.Pix) != 300 || cap(a.Pix) != 512 {
		t.Fatalf("len %d cap %d", len(a.Pix), cap(a.Pix))
	}
	Recycle(a)
	b := NewImage(2, 10, 10) // 200 values fit in the 256 class only
	if cap(b.Pix) != 256 {
		t.Errorf("cap %d, want 256", cap(b.Pix))
	}
	c := NewImage(5, 10, 10) // 500 values: class 512
	if len(c.Pix) != 500 || cap(c.Pix) < 500 {
		t.Errorf("len %d cap %d", len(c.Pix), cap(c.Pix))
	}
	// A recycled buffer is handed out again for a request of its class.
	// sync.Pool may drop an entry (a GC, the race detector), so of many
	// tries most, not all, must reuse.
	reused := 0
	for range 100 {
		x := NewImage(3, 10, 10)
		p := &x.Pix[0]
		Recycle(x)
		y := NewImage(1, 20, 20) // 400 values: the same 512 class
		if &y.Pix[0] == p {
			reused++
		}
		if len(y.Pix) != 400 {
			t.Fatalf("len %d, want 400", len(y.Pix))
		}
		Recycle(y)
	}
	if reused < 50 {
		t.Errorf("a recycled buffer was reused %d times in 100", reused)
	}
	// A buffer too small for a request is never handed out for it.
	small := NewImage(1, 16, 16) // 256 values, class 256
	Recycle(small)
	for range 10 {
		if big := NewImage(1, 16, 17); cap(big.Pix) < 272 {
			t.Fatalf("a %d-value image got a buffer of capacity %d", 272, cap(big.Pix))
		}
	}
}

func TestComposeSkipsNilAndFlattens(t *testing.T) {
	inner := Compose(HFlip{P: 1}, nil)
	c := Compose(nil, inner, HFlip{P: 1}).(Composed)
	if len(c) != 2 {
		t.Fatalf("composed %d steps", len(c))
	}
	img := Image{C: 1, H: 1, W: 3, Pix: []float32{1, 2, 3}}
	out := c.Apply(img, newRNG(1))
	if out.Pix[0] != 1 || out.Pix[2] != 3 {
		t.Errorf("two flips gave %v", out.Pix)
	}
}

// A pipeline ending in RandAugment normalises its levels through a table
// and writes one erased box as it goes: the values, and the random draws
// after it, of running the transforms, normalising and erasing in turn,
// for every erase mode, with one box (fused) and with up to two (not).
func TestPipelineLevelsMatchStepByStep(t *testing.T) {
	mean, std := []float32{0.485, 0.456, 0.406}, []float32{0.229, 0.224, 0.225}
	for _, mode := range []EraseMode{EraseConst, EraseRand, ErasePixel} {
		for _, count := range []int{1, 2} {
			cfg := DeiTTrainConfig(24, mean, std)
			cfg.REProb, cfg.REMode, cfg.RECount = 0.7, mode, count
			p, err := TrainPipeline(cfg)
			if err != nil {
				t.Fatal(err)
			}
			for seed := range uint64(40) {
				src := randomImage(newRNG(100+seed), 3, 40, 52)
				got := make([]float32, 3*24*24)
				rng := newRNG(seed)
				if err := p.Process(src.Clone(), rng, got); err != nil {
					t.Fatal(err)
				}
				want := make([]float32, len(got))
				ref := newRNG(seed)
				img := p.Transform.Apply(src.Clone(), ref)
				if err := normalize(img, p.Mean, p.Std, want); err != nil {
					t.Fatal(err)
				}
				p.PostNorm.Apply(Image{C: 3, H: 24, W: 24, Pix: want}, ref)
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("mode %d, count %d, seed %d: value %d = %v, step by step %v", mode, count, seed, i, got[i], want[i])
					}
				}
				if a, b := rng.Uint64(), ref.Uint64(); a != b {
					t.Fatalf("mode %d, count %d, seed %d: the random stream differs after the pipeline", mode, count, seed)
				}
			}
		}
	}
}
