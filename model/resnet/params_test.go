package resnet

import (
	"math"
	"strings"
	"sync"
	"testing"

	"gorgonia.org/tensor"
)

// cifarParams is the parameter count of a depth-(6n+2) CIFAR ResNet with
// option-B shortcuts on c input channels and k classes, counted by hand:
//
//	stem      3×3 conv c→16 + BN(16)                     144c + 32
//	stage 1   n blocks of two 3×3 16→16 convs + 2 BN      n·4672
//	stage 2   first block 3×3 16→32, 3×3 32→32, 2 BN,
//	          1×1 16→32 shortcut + BN                     14528
//	          n−1 blocks of two 3×3 32→32 convs + 2 BN    (n−1)·18560
//	stage 3   first block 3×3 32→64, 3×3 64→64, 2 BN,
//	          1×1 32→64 shortcut + BN                     57728
//	          n−1 blocks of two 3×3 64→64 convs + 2 BN    (n−1)·73984
//	fc        64→k                                        65k
//
// which sums to 144c + 97216n + 65k − 20256. Option A (parameter-free
// shortcuts) would have 2752 fewer: 269,722 for resnet20 on CIFAR-10, the
// paper's "0.27M".
func cifarParams(n, c, k int) int { return 144*c + 97216*n + 65*k - 20256 }

func TestNumParamsCIFAR(t *testing.T) {
	if got := cifarParams(3, 3, 10); got != 272474 {
		t.Fatalf("formula gives %d for resnet20 on CIFAR-10", got)
	}
	for _, tc := range []struct {
		arch string
		n    int
	}{{"resnet20", 3}, {"resnet32", 5}, {"resnet44", 7}, {"resnet56", 9}, {"resnet110", 18}} {
		for _, c := range []int{1, 3} {
			for _, k := range []int{10, 100} {
				got, err := NumParams(BuildConfig{Arch: tc.arch, Channels: c, NumClasses: k})
				if err != nil {
					t.Fatal(err)
				}
				if want := cifarParams(tc.n, c, k); got != want {
					t.Errorf("%s, %d channels, %d classes: %d parameters, want %d", tc.arch, c, k, got, want)
				}
			}
		}
	}
}

func TestNumParamsImageNet(t *testing.T) {
	// torchvision.models.resnetXX(num_classes=1000) parameter counts.
	for arch, want := range map[string]int{
		"resnet18":  11689512,
		"resnet34":  21797672,
		"resnet50":  25557032,
		"resnet101": 44549160,
		"resnet152": 60192808,
	} {
		got, err := NumParams(BuildConfig{Arch: arch, NumClasses: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: %d parameters, want %d", arch, got, want)
		}
	}
}

// builtModels caches models that tests only read, since the ImageNet ones
// take a while to initialise.
var builtModels sync.Map

// readOnlyModel returns a model for cfg with seed 1, shared between tests
// that neither train it nor run it in training mode.
func readOnlyModel(t *testing.T, cfg BuildConfig) *Model {
	t.Helper()
	if m, ok := builtModels.Load(cfg); ok {
		return m.(*Model)
	}
	m, err := New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	builtModels.Store(cfg, m)
	return m
}

func TestModelMatchesNumParams(t *testing.T) {
	for _, cfg := range []BuildConfig{
		{Arch: "resnet18", NumClasses: 1000},
		{Arch: "resnet50", NumClasses: 1000},
		{Arch: "resnet20", Channels: 1, NumClasses: 10},
	} {
		m := readOnlyModel(t, cfg)
		total := 0
		for _, p := range m.Params() {
			if !p.Value.Shape().Eq(p.Shape) {
				t.Fatalf("%s: value shape %v, declared %v", p.Name, p.Value.Shape(), p.Shape)
			}
			total += p.Shape.TotalSize()
		}
		want, _ := NumParams(cfg)
		if total != want {
			t.Errorf("%s: model holds %d parameters, NumParams says %d", cfg.Arch, total, want)
		}
	}
}

func paramShapes(ps []Param) map[string]tensor.Shape {
	m := make(map[string]tensor.Shape, len(ps))
	for _, p := range ps {
		m[p.Name] = p.Shape
	}
	return m
}

func TestParamNamesFollowTorchvision(t *testing.T) {
	for _, tc := range []struct {
		cfg     BuildConfig
		params  map[string]tensor.Shape
		buffers map[string]tensor.Shape
		first   []string
		absent  []string
	}{
		{
			cfg: BuildConfig{Arch: "resnet50", NumClasses: 1000},
			params: map[string]tensor.Shape{
				"conv1.weight":                 {64, 3, 7, 7},
				"layer1.0.conv1.weight":        {64, 64, 1, 1},
				"layer1.0.conv2.weight":        {64, 64, 3, 3},
				"layer1.0.conv3.weight":        {256, 64, 1, 1},
				"layer1.0.downsample.0.weight": {256, 64, 1, 1},
				"layer1.0.downsample.1.bias":   {256},
				"layer4.2.bn3.weight":          {2048},
				"fc.weight":                    {1000, 2048},
				"fc.bias":                      {1000},
			},
			buffers: map[string]tensor.Shape{"bn1.running_mean": {64}, "layer3.5.bn2.running_var": {256}},
			first:   []string{"conv1.weight", "bn1.weight", "bn1.bias", "layer1.0.conv1.weight"},
			absent:  []string{"layer1.1.downsample.0.weight"},
		},
		{
			cfg: BuildConfig{Arch: "resnet18", NumClasses: 1000},
			params: map[string]tensor.Shape{
				"layer2.0.conv1.weight":        {128, 64, 3, 3},
				"layer2.0.downsample.0.weight": {128, 64, 1, 1},
				"layer4.1.conv2.weight":        {512, 512, 3, 3},
				"fc.weight":                    {1000, 512},
			},
			absent: []string{"layer1.0.downsample.0.weight", "layer1.0.conv3.weight"},
		},
		{
			cfg: BuildConfig{Arch: "resnet20", Channels: 1, NumClasses: 10},
			params: map[string]tensor.Shape{
				"conv1.weight":                 {16, 1, 3, 3},
				"layer1.2.conv2.weight":        {16, 16, 3, 3},
				"layer2.0.downsample.0.weight": {32, 16, 1, 1},
				"layer3.0.downsample.1.weight": {64},
				"fc.weight":                    {10, 64},
			},
			buffers: map[string]tensor.Shape{"layer3.2.bn2.running_mean": {64}},
			absent:  []string{"layer4.0.conv1.weight", "layer1.0.downsample.0.weight"},
		},
	} {
		m := readOnlyModel(t, tc.cfg)
		params, buffers := paramShapes(m.Params()), paramShapes(m.Buffers())
		if len(params) != len(m.Params()) || len(buffers) != len(m.Buffers()) {
			t.Fatalf("%s: duplicate names", tc.cfg.Arch)
		}
		for name, want := range tc.params {
			if got, ok := params[name]; !ok || !got.Eq(want) {
				t.Errorf("%s: %s has shape %v (present %v), want %v", tc.cfg.Arch, name, got, ok, want)
			}
		}
		for name, want := range tc.buffers {
			if got, ok := buffers[name]; !ok || !got.Eq(want) {
				t.Errorf("%s: buffer %s has shape %v (present %v), want %v", tc.cfg.Arch, name, got, ok, want)
			}
		}
		for _, name := range tc.absent {
			if _, ok := params[name]; ok {
				t.Errorf("%s: unexpected parameter %s", tc.cfg.Arch, name)
			}
		}
		for i, name := range tc.first {
			if m.Params()[i].Name != name {
				t.Errorf("%s: parameter %d is %s, want %s", tc.cfg.Arch, i, m.Params()[i].Name, name)
			}
		}
		// Two buffers per batch norm, and two parameters.
		bnParams := 0
		for name := range params {
			if strings.Contains(name, "bn") || strings.Contains(name, "downsample.1") {
				bnParams++
			}
		}
		if bnParams != len(buffers) {
			t.Errorf("%s: %d batch-norm parameters but %d buffers", tc.cfg.Arch, bnParams, len(buffers))
		}
	}
}

func TestInitialisation(t *testing.T) {
	m, err := New(BuildConfig{Arch: "resnet20", NumClasses: 10}, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range m.Params() {
		d := p.Value.Data().([]float32)
		switch {
		case strings.HasSuffix(p.Name, "conv2.weight") && strings.HasPrefix(p.Name, "layer3."):
			// Kaiming normal, fan_out = 64·3·3: std √(2/576) ≈ 0.0589.
			var ss float64
			for _, v := range d {
				ss += float64(v) * float64(v)
			}
			std, want := math.Sqrt(ss/float64(len(d))), math.Sqrt(2.0/576)
			if math.Abs(std-want) > 0.03*want {
				t.Errorf("%s: std %.4f, want %.4f", p.Name, std, want)
			}
		case p.Name == "fc.weight" || p.Name == "fc.bias":
			for _, v := range d {
				if math.Abs(float64(v)) > 1/math.Sqrt(64) {
					t.Fatalf("%s: %v outside ±1/8", p.Name, v)
				}
			}
		case strings.Contains(p.Name, "bn") || strings.Contains(p.Name, "downsample.1"):
			want := float32(0)
			if strings.HasSuffix(p.Name, ".weight") {
				want = 1
			}
			for _, v := range d {
				if v != want {
					t.Fatalf("%s: %v, want %v", p.Name, v, want)
				}
			}
		}
	}
	for _, b := range m.Buffers() {
		want := float32(0)
		if strings.HasSuffix(b.Name, "running_var") {
			want = 1
		}
		for _, v := range b.Value.Data().([]float32) {
			if v != want {
				t.Fatalf("%s: %v, want %v", b.Name, v, want)
			}
		}
	}
	// The same seed gives the same weights, another seed others.
	again, _ := New(BuildConfig{Arch: "resnet20", NumClasses: 10}, 3)
	other, _ := New(BuildConfig{Arch: "resnet20", NumClasses: 10}, 4)
	a, b, c := m.Params()[0].Value.Data().([]float32), again.Params()[0].Value.Data().([]float32), other.Params()[0].Value.Data().([]float32)
	if a[0] != b[0] || a[5] != b[5] || a[0] == c[0] {
		t.Fatalf("seeding: %v %v %v", a[:2], b[:2], c[:2])
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  BuildConfig
		want string
	}{
		{BuildConfig{Arch: "resnet19", NumClasses: 10}, "BuildConfig.Arch \"resnet19\""},
		{BuildConfig{Arch: "resnet20"}, "BuildConfig.NumClasses 0"},
		{BuildConfig{Arch: "resnet20", NumClasses: 10, Channels: -1}, "BuildConfig.Channels -1"},
	} {
		_, err := New(tc.cfg, 1)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one mentioning %q", tc.cfg, err, tc.want)
		}
	}
}
