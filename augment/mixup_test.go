package augment

import (
	"math"
	"strings"
	"testing"
)

func TestBetaSampleMoments(t *testing.T) {
	rng := newRNG(24)
	for _, a := range []float64{0.8, 1, 2.5} {
		var xs []float64
		for range 40000 {
			x := betaSample(rng, a, a)
			if x < 0 || x > 1 {
				t.Fatalf("Beta(%g) sample %v", a, x)
			}
			xs = append(xs, x)
		}
		m, s := meanStd(xs)
		assertNear(t, "beta mean", m, 0.5, 0.01)
		assertNear(t, "beta std", s, math.Sqrt(a*a/((2*a)*(2*a)*(2*a+1))), 0.01)
	}
}

// batchOf returns b images of (c, h, w) where image i is constant i+1.
func batchOf(b, c, h, w int) []float32 {
	x := make([]float32, b*c*h*w)
	for i := range x {
		x[i] = float32(i/(c*h*w) + 1)
	}
	return x
}

func TestMixupBlend(t *testing.T) {
	m := Mixup{MixupAlpha: 0.8, Prob: 1, Classes: 5}
	x := batchOf(4, 2, 3, 3)
	labels := []int{0, 1, 2, 3}
	targets := make([]float32, 4*5)
	info, err := m.Apply(x, 2, 3, 3, labels, targets, newRNG(25))
	if err != nil {
		t.Fatal(err)
	}
	if info.CutMix || info.Lam <= 0 || info.Lam >= 1 {
		t.Fatalf("info %+v", info)
	}
	for i := 0; i < 4; i++ {
		want := info.Lam*float64(i+1) + (1-info.Lam)*float64(4-i)
		for _, v := range x[i*18 : (i+1)*18] {
			assertNear(t, "mixed value", float64(v), want, 1e-5)
		}
		row := targets[i*5 : (i+1)*5]
		assertNear(t, "own label", float64(row[labels[i]]), info.Lam, 1e-6)
		assertNear(t, "partner label", float64(row[labels[3-i]]), 1-info.Lam, 1e-6)
	}
}

func TestCutMixBoxAndLam(t *testing.T) {
	m := Mixup{CutmixAlpha: 1, Prob: 1, CorrectLam: true, Classes: 3}
	rng := newRNG(26)
	for range 200 {
		x := batchOf(2, 3, 10, 12)
		targets := make([]float32, 6)
		info, err := m.Apply(x, 3, 10, 12, []int{0, 2}, targets, rng)
		if err != nil {
			t.Fatal(err)
		}
		if !info.CutMix {
			t.Fatal("cutmix_alpha only: CutMix expected")
		}
		area := (info.Y1 - info.Y0) * (info.X1 - info.X0)
		assertNear(t, "corrected lam", info.Lam, 1-float64(area)/120, 1e-12)
		for i := 0; i < 2; i++ {
			for c := 0; c < 3; c++ {
				for y := 0; y < 10; y++ {
					for xx := 0; xx < 12; xx++ {
						inBox := y >= info.Y0 && y < info.Y1 && xx >= info.X0 && xx < info.X1
						want := float32(i + 1)
						if inBox {
							want = float32(2 - i)
						}
						if v := x[i*360+(c*10+y)*12+xx]; v != want {
							t.Fatalf("image %d (%d,%d,%d) = %v, want %v (box %+v)", i, c, y, xx, v, want, info)
						}
					}
				}
			}
		}
		assertNear(t, "target own", float64(targets[0]), info.Lam, 1e-6)
		assertNear(t, "target other", float64(targets[2]), 1-info.Lam, 1e-6)
	}
}

// DeiT's setting: rows of soft targets sum to 1, entries are at least the
// smoothing floor, CutMix is chosen about half the time.
func TestDeiTMixupTargets(t *testing.T) {
	m := NewDeiTMixup(10)
	rng := newRNG(27)
	const B = 8
	cut := 0
	for trial := range 2000 {
		x := batchOf(B, 1, 8, 8)
		labels := make([]int, B)
		for i := range labels {
			labels[i] = (i*3 + trial) % 10
		}
		targets := make([]float32, B*10)
		info, err := m.Apply(x, 1, 8, 8, labels, targets, rng)
		if err != nil {
			t.Fatal(err)
		}
		if info.CutMix {
			cut++
		}
		for i := 0; i < B; i++ {
			var sum float64
			for _, v := range targets[i*10 : (i+1)*10] {
				sum += float64(v)
				if v < 0.01-1e-6 {
					t.Fatalf("target %v below the smoothing floor 0.01", v)
				}
			}
			assertNear(t, "row mass", sum, 1, 1e-5)
		}
	}
	assertNear(t, "cutmix fraction", float64(cut)/2000, 0.5, 0.04)
}

func TestMixupProbZeroGivesSmoothedOneHot(t *testing.T) {
	m := Mixup{MixupAlpha: 1, Prob: 0, LabelSmoothing: 0.1, Classes: 4}
	x := batchOf(2, 1, 2, 2)
	orig := append([]float32(nil), x...)
	targets := make([]float32, 8)
	info, err := m.Apply(x, 1, 2, 2, []int{3, 1}, targets, newRNG(1))
	if err != nil || info.Lam != 1 {
		t.Fatalf("info %+v err %v", info, err)
	}
	for i := range x {
		if x[i] != orig[i] {
			t.Fatal("images changed without mixing")
		}
	}
	want := []float32{0.025, 0.025, 0.025, 0.925, 0.025, 0.925, 0.025, 0.025}
	for i := range want {
		assertNear(t, "target", float64(targets[i]), float64(want[i]), 1e-7)
	}
}

func TestMixupErrors(t *testing.T) {
	x := make([]float32, 2*4)
	tg := make([]float32, 2*3)
	for name, tc := range map[string]struct {
		m      Mixup
		labels []int
		n      int
		want   string
	}{
		"no alpha":  {Mixup{Prob: 1, Classes: 3}, []int{0, 1}, 8, "one > 0"},
		"classes":   {Mixup{MixupAlpha: 1, Classes: 0}, []int{0, 1}, 8, "Classes"},
		"label":     {Mixup{MixupAlpha: 1, Classes: 3}, []int{0, 3}, 8, "label 3 of row 1"},
		"too short": {Mixup{MixupAlpha: 1, Classes: 3}, []int{0, 1}, 7, "images hold 7"},
	} {
		_, err := tc.m.Apply(x[:tc.n], 1, 2, 2, tc.labels, tg, newRNG(1))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", name, err, tc.want)
		}
	}
}

func TestOneHot(t *testing.T) {
	dst := make([]float32, 6)
	if err := OneHot([]int{2, 0}, 3, 0, dst); err != nil {
		t.Fatal(err)
	}
	want := []float32{0, 0, 1, 1, 0, 0}
	for i := range want {
		if dst[i] != want[i] {
			t.Fatalf("one-hot %v, want %v", dst, want)
		}
	}
	if err := OneHot([]int{1}, 3, 0.3, dst); err != nil {
		t.Fatal(err)
	}
	assertNear(t, "off", float64(dst[0]), 0.1, 1e-7)
	assertNear(t, "on", float64(dst[1]), 0.8, 1e-7)
	for _, bad := range []struct {
		labels  []int
		classes int
		s       float64
		dst     []float32
		want    string
	}{
		{[]int{3}, 3, 0, dst, "label 3 of row 0 outside [0, 3)"},
		{[]int{-1}, 3, 0, dst, "label -1"},
		{[]int{0, 1, 2}, 3, 0, dst, "dst holds 6"},
		{[]int{0}, 3, 1.5, dst, "smoothing"},
		{[]int{0}, 0, 0, dst, "classes = 0"},
	} {
		if err := OneHot(bad.labels, bad.classes, bad.s, bad.dst); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("OneHot(%v, %d, %g): error %v, want %q", bad.labels, bad.classes, bad.s, err, bad.want)
		}
	}
}
