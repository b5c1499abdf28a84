package optim

import (
	"math"
	"testing"
)

func TestSchedulesAtKeySteps(t *testing.T) {
	const base, minLR, warmLR = 1e-3, 1e-5, 1e-6
	warm := Warmup{Steps: 10, InitLR: warmLR}
	cos := Cosine{BaseLR: base, MinLR: minLR, Steps: 100, Warmup: warm}
	cosPrefix := cos
	cosPrefix.WarmupPrefix = true
	step := StepDecay{BaseLR: 0.1, DecaySteps: 30, Gamma: 0.1, Warmup: Warmup{Steps: 5, InitLR: 0}}
	for _, tc := range []struct {
		name string
		s    Schedule
		step int
		want float64
	}{
		{"cosine start", cos, 0, warmLR},
		{"cosine negative step", cos, -3, warmLR},
		{"cosine mid-warmup", cos, 5, warmLR + 5*(base-warmLR)/10},
		{"cosine last warmup step", cos, 9, warmLR + 9*(base-warmLR)/10},
		// timm's default counts the cosine from step 0, so warmup's end is
		// already 10% into it.
		{"cosine end of warmup", cos, 10, minLR + 0.5*(base-minLR)*(1+math.Cos(math.Pi*0.1))},
		{"cosine midpoint", cos, 50, (base + minLR) / 2},
		{"cosine end", cos, 100, minLR},
		{"cosine after end", cos, 1000, minLR},
		{"prefix end of warmup", cosPrefix, 10, base},
		{"prefix midpoint", cosPrefix, 60, (base + minLR) / 2},
		{"prefix end", cosPrefix, 110, minLR},
		{"step warmup", step, 2, 0.04},
		{"step first", step, 5, 0.1},
		{"step before decay", step, 29, 0.1},
		{"step first decay", step, 30, 0.01},
		{"step second decay", step, 65, 0.001},
		{"constant warmup", Constant{BaseLR: 0.5, Warmup: Warmup{Steps: 4, InitLR: 0.1}}, 1, 0.2},
		{"constant", Constant{BaseLR: 0.5, Warmup: Warmup{Steps: 4, InitLR: 0.1}}, 4, 0.5},
		{"constant no warmup", Constant{BaseLR: 0.5}, 0, 0.5},
	} {
		if got := tc.s.LR(tc.step); math.Abs(got-tc.want) > 1e-12*math.Max(1, tc.want) {
			t.Errorf("%s: LR(%d) = %.12g, want %.12g", tc.name, tc.step, got, tc.want)
		}
	}
}

func TestScheduleValidate(t *testing.T) {
	if err := (Cosine{BaseLR: 1, Steps: 10}).Validate(); err != nil {
		t.Error(err)
	}
	for name, err := range map[string]error{
		"cosine steps 0":     Cosine{BaseLR: 1}.Validate(),
		"cosine negative lr": Cosine{BaseLR: -1, Steps: 1}.Validate(),
		"negative warmup":    Cosine{BaseLR: 1, Steps: 1, Warmup: Warmup{Steps: -1}}.Validate(),
		"step decay steps 0": StepDecay{BaseLR: 1, Gamma: 0.1}.Validate(),
		"constant NaN":       Constant{BaseLR: math.NaN()}.Validate(),
	} {
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestScaleLR(t *testing.T) {
	if got := ScaleLR(5e-4, 1024); math.Abs(got-1e-3) > 1e-18 {
		t.Fatalf("ScaleLR(5e-4, 1024) = %g, want 1e-3", got)
	}
	if got := ScaleLR(5e-4, 256); math.Abs(got-2.5e-4) > 1e-18 {
		t.Fatalf("ScaleLR(5e-4, 256) = %g, want 2.5e-4", got)
	}
}
