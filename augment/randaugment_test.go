package augment

import (
	"math"
	"strings"
	"testing"
)

func TestParseRandAugmentDeiT(t *testing.T) {
	fill := []float32{124. / 255, 116. / 255, 104. / 255}
	ra, err := ParseRandAugment("rand-m9-mstd0.5-inc1", AugHParams{Interp: Bicubic, Fill: fill})
	if err != nil {
		t.Fatal(err)
	}
	if ra.Magnitude != 9 || ra.MagnitudeStd != 0.5 || ra.NumLayers != 2 || ra.Prob != 0.5 || ra.MagnitudeMax != 10 || ra.Weights != nil || ra.Interp != Bicubic {
		t.Errorf("parsed %+v", ra)
	}
	var names []string
	for _, op := range ra.Ops {
		names = append(names, op.String())
	}
	want := "AutoContrast Equalize Invert Rotate PosterizeIncreasing SolarizeIncreasing SolarizeAdd ColorIncreasing ContrastIncreasing BrightnessIncreasing SharpnessIncreasing ShearX ShearY TranslateXRel TranslateYRel"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("ops = %s\nwant %s", got, want)
	}
}

func TestParseRandAugmentOptions(t *testing.T) {
	ra, err := ParseRandAugment("rand-n3-m7-mmax12-w0-mstd101", AugHParams{})
	if err != nil {
		t.Fatal(err)
	}
	if ra.NumLayers != 3 || ra.Magnitude != 7 || ra.MagnitudeMax != 12 || !math.IsInf(ra.MagnitudeStd, 1) || len(ra.Weights) != 15 {
		t.Errorf("parsed %+v", ra)
	}
	if ra.Ops[4] != OpPosterize {
		t.Errorf("non-inc list has %v at 4", ra.Ops[4])
	}
	def, err := ParseRandAugment("rand", AugHParams{})
	if err != nil || def.Magnitude != 10 || def.NumLayers != 2 {
		t.Errorf("rand: %+v, %v", def, err)
	}
}

func TestParseRandAugmentErrors(t *testing.T) {
	for spec, want := range map[string]string{
		"":               "must start with",
		"augmix-m3":      "must start with",
		"rand-m":         "not a key followed by a number",
		"rand--m9":       "empty section",
		"rand-q3":        "unknown key",
		"rand-m9x":       "non-negative integer",
		"rand-mstd-1":    "not a key followed",
		"rand-mstdx0.5":  "unknown key",
		"rand-mstd0.5.1": "non-negative number",
		"rand-inc2":      "0 or 1",
		"rand-w1":        "only weight set 0",
		"rand-n65":       "at most 64",
		"rand-m9-":       "empty section",
	} {
		_, err := ParseRandAugment(spec, AugHParams{})
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "RandAugment spec") {
			t.Errorf("%q: error %v, want one containing %q", spec, err, want)
		}
	}
}

// Magnitude noise: N(9, 0.5) clipped to [0, 10].
func TestRandAugmentMagnitudeNoise(t *testing.T) {
	ra, _ := ParseRandAugment("rand-m9-mstd0.5-inc1", AugHParams{})
	rng := newRNG(16)
	var ms []float64
	for range 20000 {
		m := ra.magnitude(rng)
		if m < 0 || m > 10 {
			t.Fatalf("magnitude %v outside [0, 10]", m)
		}
		ms = append(ms, m)
	}
	mean, std := meanStd(ms)
	assertNear(t, "mean", mean, 9, 0.02)
	assertNear(t, "std", std, 0.5, 0.03) // clipping at 10 (2 std) trims it slightly
	ra.MagnitudeStd = math.Inf(1)
	ms = ms[:0]
	for range 20000 {
		ms = append(ms, ra.magnitude(rng))
	}
	mean, std = meanStd(ms)
	assertNear(t, "uniform mean", mean, 4.5, 0.05)
	assertNear(t, "uniform std", std, 9/math.Sqrt(12), 0.05)
}

func TestWeightedPickWithoutReplacement(t *testing.T) {
	rng := newRNG(17)
	w := []float64{0.5, 0.3, 0.2, 0}
	counts := make([]int, 4)
	for range 30000 {
		used := make([]bool, 4)
		k := weightedPick(w, used, rng)
		counts[k]++
		used[k] = true
		if k2 := weightedPick(w, used, rng); k2 == k || k2 == 3 {
			t.Fatalf("second pick %d after %d", k2, k)
		}
	}
	for i, want := range []float64{0.5, 0.3, 0.2, 0} {
		assertNear(t, "pick frequency", float64(counts[i])/30000, want, 0.01)
	}
}

// Each operation at a fixed magnitude, applied with probability 1: outputs
// keep the size, stay in [0, 1], and differ from the input.
func TestRandAugmentOpsRunAndChange(t *testing.T) {
	// levels 20..240: AutoContrast and Solarize (threshold 230) have work to do
	rng := newRNG(18)
	src := imageFrom(3, 24, 20, func(_, _, _ int) float32 { return float32(20+rng.IntN(221)) / 255 })
	for op := RandOp(0); op < numRandOps; op++ {
		ra := &RandAugment{Ops: []RandOp{op}, NumLayers: 1, Magnitude: 9, MagnitudeMax: 10, Prob: 1, Interp: Bicubic, Fill: []float32{0.5, 0.5, 0.5}}
		out := ra.Apply(src.Clone(), newRNG(1))
		if out.C != 3 || out.H != 24 || out.W != 20 || len(out.Pix) != len(src.Pix) {
			t.Fatalf("%v: output %dx%dx%d", op, out.C, out.H, out.W)
		}
		diff := 0.0
		for i, v := range out.Pix {
			if v < 0 || v > 1 || math.IsNaN(float64(v)) {
				t.Fatalf("%v: value %v", op, v)
			}
			diff += math.Abs(float64(v - src.Pix[i]))
		}
		if diff == 0 {
			t.Errorf("%v at magnitude 9 left the image unchanged", op)
		}
	}
}

// Probability 0.5 per drawn op: with a single op (Invert) and one layer the
// image is inverted about half the time.
func TestRandAugmentProbability(t *testing.T) {
	ra := &RandAugment{Ops: []RandOp{OpInvert}, NumLayers: 1, Magnitude: 9, Prob: 0.5}
	rng := newRNG(19)
	n := 0
	for range 10000 {
		img := ra.Apply(Image{C: 1, H: 1, W: 1, Pix: []float32{0}}, rng)
		if img.Pix[0] == 1 {
			n++
		}
	}
	if n < 4800 || n > 5200 {
		t.Errorf("inverted %d of 10000", n)
	}
}

// The same seed gives the same result; geometric ops fill with Fill.
func TestRandAugmentDeterministicAndFill(t *testing.T) {
	ra, _ := ParseRandAugment("rand-m9-mstd0.5-inc1", AugHParams{Interp: Bicubic, Fill: []float32{0.1, 0.2, 0.3}})
	src := randomImage(newRNG(20), 3, 32, 32)
	for seed := uint64(0); seed < 50; seed++ {
		a := ra.Apply(src.Clone(), newRNG(seed))
		b := ra.Apply(src.Clone(), newRNG(seed))
		for i := range a.Pix {
			if a.Pix[i] != b.Pix[i] {
				t.Fatalf("seed %d: outputs differ at %d", seed, i)
			}
		}
	}
	fill := []float32{26. / 255, 51. / 255, 77. / 255} // levels
	rot := &RandAugment{Ops: []RandOp{OpRotate}, NumLayers: 1, Magnitude: 10, MagnitudeMax: 10, Prob: 1, Interp: Bilinear, Fill: fill}
	out := rot.Apply(src.Clone(), newRNG(3))
	for c, f := range fill {
		if at(out, c, 0, 0) != f || at(out, c, 31, 31) != f {
			t.Errorf("channel %d corners %v %v, want fill %v", c, at(out, c, 0, 0), at(out, c, 31, 31), f)
		}
	}
}

// Level arguments at magnitude 9 (lv = 0.9), by the effect on known images.
func TestRandAugmentLevels(t *testing.T) {
	apply := func(op RandOp, img Image) Image {
		ra := &RandAugment{Ops: []RandOp{op}, NumLayers: 1, Magnitude: 9, MagnitudeMax: 10, Prob: 1}
		return ra.Apply(img, newRNG(2))
	}
	// PosterizeIncreasing: 4 - int(3.6) = 1 bit.
	assertLevels(t, "PosterizeIncreasing", apply(OpPosterizeIncreasing, levelsImage(100, 130)), 0, 128)
	// Posterize: int(3.6) = 3 bits: mask 0xe0.
	assertLevels(t, "Posterize", apply(OpPosterize, levelsImage(0x7f)), 0x60)
	// SolarizeIncreasing: threshold 256 - int(230.4) = 26.
	assertLevels(t, "SolarizeIncreasing", apply(OpSolarizeIncreasing, levelsImage(25, 26)), 25, 229)
	// Solarize: threshold int(230.4) = 230.
	assertLevels(t, "Solarize", apply(OpSolarize, levelsImage(229, 230)), 229, 25)
	// SolarizeAdd: int(99) = 99.
	assertLevels(t, "SolarizeAdd", apply(OpSolarizeAdd, levelsImage(20)), 119)
	// Brightness: factor 0.9*1.8 + 0.1 = 1.72; 0.5 is level 128, 128*1.72
	// = 220.16 truncated.
	assertLevels(t, "Brightness", apply(OpBrightness, Image{C: 1, H: 1, W: 1, Pix: []float32{0.5}}), 220)
	// BrightnessIncreasing: 1 ± 0.81: 128*1.81 = 231.68 or 128*0.19 = 24.32.
	bi := apply(OpBrightnessIncreasing, levelsImage(128))
	if l := levelOf(bi.Pix[0]); l != 231 && l != 24 {
		t.Errorf("BrightnessIncreasing gave level %d, want 231 or 24", l)
	}
}
