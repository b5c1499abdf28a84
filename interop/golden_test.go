package interop

import (
	"encoding/json"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/vit-train/vit-train/formats/safetensors"
	"github.com/vit-train/vit-train/model/vit"
)

// Golden data written by scripts/make_golden.py with PyTorch.
const golden = "testdata/golden/"

// goldenConfig is the model description make_golden.py stores with the
// reference inputs and logits.
type goldenConfig struct {
	Img, Patch, Chans, Dim, Depth, Heads, MLP, Classes int
	QKVBias                                            bool `json:"qkv_bias"`
	Distilled                                          bool
}

type goldenIO struct {
	cfg                         goldenConfig
	images, logits, cls, distil safetensors.Tensor
}

func readGoldenIO(t *testing.T, stem string) goldenIO {
	t.Helper()
	f, err := safetensors.ReadFile(golden + stem + "_io.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	var io goldenIO
	if err := json.Unmarshal([]byte(f.Metadata["config"]), &io.cfg); err != nil {
		t.Fatal(err)
	}
	io.images, _ = f.Get("images")
	io.logits, _ = f.Get("logits")
	io.cls, _ = f.Get("logits_cls")
	io.distil, _ = f.Get("logits_dist")
	return io
}

// buildModel returns a float32 model holding the imported weights.
func buildModel(t *testing.T, imp *Imported) *vit.ViT {
	t.Helper()
	m, err := vit.New(imp.Config, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Params) != len(imp.Params) {
		t.Fatalf("%d imported tensors for %d parameters", len(imp.Params), len(m.Params))
	}
	for i, p := range m.Params {
		if imp.Params[i].Name != p.Name {
			t.Fatalf("imported tensor %d is %q, parameter %q", i, imp.Params[i].Name, p.Name)
		}
		copy(p.Float32s(), imp.Params[i].Data)
	}
	return m
}

// checkClose fails unless got and want agree within tol everywhere.
func checkClose(t *testing.T, what string, got, want []float32, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	worst, at := 0.0, 0
	for i := range got {
		if d := math.Abs(float64(got[i] - want[i])); d > worst || d != d {
			worst, at = d, i
		}
	}
	if !(worst <= tol) {
		t.Errorf("%s: |difference| %.3g at %d (got %g, want %g), tolerance %g", what, worst, at, got[at], want[at], tol)
	}
}

// checkLogits runs the evaluation graph on the golden images and compares
// its logits with PyTorch's.
func checkLogits(t *testing.T, imp *Imported, io goldenIO) {
	t.Helper()
	m := buildModel(t, imp)
	batch := io.images.Shape[0]
	g, err := m.BuildGraph(batch, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	copy(g.ImageData.([]float32), io.images.Data)
	if err := g.Run(); err != nil {
		t.Fatal(err)
	}
	checkClose(t, "predictions", g.Predictions(nil), io.logits.Data, 1e-4)
	checkClose(t, "class head", g.Value(g.Logits).Data().([]float32), io.cls.Data, 1e-4)
	if imp.Config.Distilled {
		checkClose(t, "distillation head", g.Value(g.DistLogits).Data().([]float32), io.distil.Data, 1e-4)
	}
}

func checkConfig(t *testing.T, got vit.Config, want goldenConfig) {
	t.Helper()
	if got.ImageSize != want.Img || got.PatchSize != want.Patch || got.Channels != want.Chans ||
		got.EmbedDim != want.Dim || got.Depth != want.Depth || got.Heads != want.Heads || got.MLPDim != want.MLP ||
		got.NumClasses != want.Classes || got.QKVBias != want.QKVBias || got.Distilled != want.Distilled ||
		got.LayerNormEps != 1e-6 {
		t.Errorf("config %+v, want %+v", got, want)
	}
}

func TestGoldenTimmLogits(t *testing.T) {
	for _, stem := range []string{"vit_plain", "deit_dist"} {
		t.Run(stem, func(t *testing.T) {
			io := readGoldenIO(t, stem)
			imp, err := Import(golden+stem+".safetensors", Hints{Heads: io.cfg.Heads})
			if err != nil {
				t.Fatal(err)
			}
			if imp.Format != Timm || imp.Config.Name != "imported" || len(imp.Notes) != 0 {
				t.Errorf("format %q, name %q, notes %q", imp.Format, imp.Config.Name, imp.Notes)
			}
			checkConfig(t, imp.Config, io.cfg)
			checkLogits(t, imp, io)
		})
	}
}

func TestGoldenJAXLogits(t *testing.T) {
	io := readGoldenIO(t, "vit_plain")
	imp, err := Import(golden+"vit_plain.npz", Hints{}) // the query kernels give the head count
	if err != nil {
		t.Fatal(err)
	}
	if imp.Format != JAX {
		t.Errorf("format %q", imp.Format)
	}
	checkConfig(t, imp.Config, io.cfg)
	checkLogits(t, imp, io)
	// The layout changes are exact: the tensors equal timm's bit for bit.
	ref, err := Import(golden+"vit_plain.safetensors", Hints{Heads: io.cfg.Heads})
	if err != nil {
		t.Fatal(err)
	}
	checkSameParams(t, imp.Params, ref.Params)
}

func checkSameParams(t *testing.T, got, want []safetensors.Tensor) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d tensors, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Name != w.Name || !slices.Equal(g.Shape, w.Shape) || g.DType != "" {
			t.Fatalf("tensor %d: %q %v %q, want %q %v F32", i, g.Name, g.Shape, g.DType, w.Name, w.Shape)
		}
		for j := range w.Data {
			if math.Float32bits(g.Data[j]) != math.Float32bits(w.Data[j]) {
				t.Fatalf("%s[%d] = %g, want %g", w.Name, j, g.Data[j], w.Data[j])
			}
		}
	}
}

// TestGoldenHalfPrecision imports weights PyTorch stored as F16 and BF16:
// each value must be the F32 weight rounded to nearest even, as torch's
// .half() and .bfloat16() round.
func TestGoldenHalfPrecision(t *testing.T) {
	for _, tc := range []struct {
		stem, file string
		heads      int
		round      func(float32) float32
	}{
		{"vit_plain", "vit_plain_f16", 3, func(x float32) float32 { return safetensors.Float16ToFloat32(safetensors.Float32ToFloat16(x)) }},
		{"deit_dist", "deit_dist_bf16", 2, func(x float32) float32 { return safetensors.BFloat16ToFloat32(safetensors.Float32ToBFloat16(x)) }},
	} {
		half, err := Import(golden+tc.file+".safetensors", Hints{Heads: tc.heads})
		if err != nil {
			t.Fatal(err)
		}
		full, err := Import(golden+tc.stem+".safetensors", Hints{Heads: tc.heads})
		if err != nil {
			t.Fatal(err)
		}
		for i := range full.Params {
			for j, v := range full.Params[i].Data {
				full.Params[i].Data[j] = tc.round(v)
			}
		}
		checkSameParams(t, half.Params, full.Params)
	}
}

// TestExportRoundTrip writes imported weights as a timm file, as export
// writes a network's tensors, and imports them again: same configuration,
// same bits, F32 only, format "pt".
func TestExportRoundTrip(t *testing.T) {
	for _, stem := range []string{"vit_plain", "deit_dist"} {
		io := readGoldenIO(t, stem)
		imp, err := Import(golden+stem+".safetensors", Hints{Heads: io.cfg.Heads})
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), stem+".safetensors")
		if err := safetensors.WriteFileAtomic(out, imp.Params, map[string]string{"format": "pt"}); err != nil {
			t.Fatal(err)
		}
		f, err := safetensors.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Metadata) != 1 || f.Metadata["format"] != "pt" {
			t.Errorf("metadata %v, want only format=pt", f.Metadata)
		}
		orig, err := safetensors.ReadFile(golden + stem + ".safetensors")
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Tensors) != len(orig.Tensors) {
			t.Errorf("%d tensors written, PyTorch's state dict has %d", len(f.Tensors), len(orig.Tensors))
		}
		for _, w := range orig.Tensors {
			g, ok := f.Get(w.Name)
			if !ok || g.DType != safetensors.F32 || !slices.Equal(g.Shape, w.Shape) || !slices.Equal(g.Data, w.Data) {
				t.Errorf("tensor %q: written %v %v, PyTorch's %v %v", w.Name, g.DType, g.Shape, w.DType, w.Shape)
			}
		}
		again, err := Import(out, Hints{Heads: io.cfg.Heads})
		if err != nil {
			t.Fatal(err)
		}
		if again.Config != imp.Config {
			t.Errorf("config %+v became %+v", imp.Config, again.Config)
		}
		checkSameParams(t, again.Params, imp.Params)
	}
}

// resampleCase is one entry of resample.safetensors' "cases" metadata.
type resampleCase struct {
	Name     string
	D        int
	Prefix   int
	Old, New [2]int
}

// TestResamplePosEmbedMatchesPyTorch compares vit.ResamplePosEmbed with
// F.interpolate(antialias=True, align_corners=False), as timm's
// resample_abs_pos_embed calls it, growing and shrinking the grid.
func TestResamplePosEmbedMatchesPyTorch(t *testing.T) {
	f, err := safetensors.ReadFile(golden + "resample.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	var cases []resampleCase
	if err := json.Unmarshal([]byte(f.Metadata["cases"]), &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatal("no cases")
	}
	for _, c := range cases {
		in, _ := f.Get(c.Name + ".input")
		for _, method := range []vit.Interpolation{vit.Bicubic, vit.Bilinear} {
			want, ok := f.Get(c.Name + "." + string(method))
			if !ok {
				t.Fatalf("%s: no %s output", c.Name, method)
			}
			got, err := vit.ResamplePosEmbed(in.Data, c.D, c.Prefix, c.Old[0], c.Old[1], c.New[0], c.New[1], method)
			if err != nil {
				t.Fatal(err)
			}
			checkClose(t, c.Name+" "+string(method)+" "+formatCase(c), got, want.Data, 1e-5)
		}
	}
}

func formatCase(c resampleCase) string {
	b, _ := json.Marshal(c)
	return string(b)
}
