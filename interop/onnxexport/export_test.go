package onnxexport

import (
	"slices"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/augment"
	"github.com/vit-train/vit-train/formats/onnx"
	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/model/resnet"
	"github.com/vit-train/vit-train/model/vit"
)

func evalPipeline(t *testing.T, size, channels int) augment.Pipeline {
	t.Helper()
	mean, std := make([]float32, channels), make([]float32, channels)
	for i := range mean {
		mean[i], std[i] = 0.5, 0.25
	}
	p, err := augment.EvalPipeline(augment.EvalConfig{Size: size, CropPct: 0.875, Interp: augment.Bicubic, Mean: mean, Std: std})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func network(t *testing.T, name string, o model.Overrides) model.Network {
	t.Helper()
	spec, err := model.Create(name, o)
	if err != nil {
		t.Fatal(err)
	}
	net, err := model.New(spec, 1)
	if err != nil {
		t.Fatal(err)
	}
	return net
}

// TestEveryModelExports exports every registered model of up to 65M
// parameters (the larger ones differ only in sizes): each graph is valid
// (Export validates it), reads every tensor of the network as an
// initializer under its own name, shape and values, and has the input and
// outputs the package documents.
func TestEveryModelExports(t *testing.T) {
	for _, name := range model.Names() {
		spec, err := model.Create(name, model.Overrides{})
		if err != nil {
			t.Fatal(err)
		}
		spec = spec.Resolve(3, 64, 10)
		var count int
		switch c := spec.Config.(type) {
		case resnet.Config:
			if count, err = resnet.NumParams(resnet.BuildConfig{Arch: c.Arch, NumClasses: 10}); err != nil {
				t.Fatal(err)
			}
		case vit.Config:
			count = c.ParamCount()
		}
		if count > 65e6 {
			continue
		}
		net, err := model.New(spec, 1)
		if err != nil {
			t.Fatal(err)
		}
		channels, size := net.Spec().Input()
		m, err := Export(net, Options{Eval: evalPipeline(t, size, channels)})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checkInitializers(t, net, m)
		in := m.Graph.Inputs
		if len(in) != 1 || in[0].Name != Input || in[0].Dims[0].Param != "batch" || !slices.Equal(dimValues(in[0].Dims[1:]), []int64{int64(channels), int64(size), int64(size)}) {
			t.Errorf("%s: inputs %+v", name, in)
		}
		out := m.Graph.Outputs
		if len(out) != 1 || out[0].Name != Logits || out[0].Dims[0].Param != "batch" || out[0].Dims[1].Value != int64(net.Spec().NumClasses()) {
			t.Errorf("%s: outputs %+v", name, out)
		}
		if m.Opset != 17 || m.Graph.Name != name {
			t.Errorf("%s: opset %d, graph %q", name, m.Opset, m.Graph.Name)
		}
	}
}

func dimValues(ds []onnx.Dim) []int64 {
	var v []int64
	for _, d := range ds {
		v = append(v, d.Value)
	}
	return v
}

// checkInitializers checks that every tensor of net is an initializer
// that shares its values, and that the other initializers are small
// constants.
func checkInitializers(t *testing.T, net model.Network, m *onnx.Model) {
	t.Helper()
	inits := map[string]onnx.Tensor{}
	for _, x := range m.Graph.Initializers {
		inits[x.Name] = x
	}
	tensors := net.Tensors()
	for _, want := range tensors {
		got, ok := inits[want.Name]
		if !ok {
			t.Errorf("%s: tensor %q is not an initializer", net.Spec().Name(), want.Name)
			continue
		}
		if len(got.Dims) != len(want.Shape) || len(got.Float32) != len(want.Data) || &got.Float32[0] != &want.Data[0] {
			t.Errorf("%s: initializer %q %v does not share the tensor %v", net.Spec().Name(), want.Name, got.Dims, want.Shape)
		}
		for i, d := range want.Shape {
			if got.Dims[i] != int64(d) {
				t.Errorf("%s: initializer %q has dims %v, the tensor %v", net.Spec().Name(), want.Name, got.Dims, want.Shape)
				break
			}
		}
	}
	names := map[string]bool{}
	for _, w := range tensors {
		names[w.Name] = true
	}
	for _, x := range m.Graph.Initializers {
		if !names[x.Name] && x.Len() > 8 {
			t.Errorf("%s: initializer %q of %d values is not a tensor of the network", net.Spec().Name(), x.Name, x.Len())
		}
	}
}

func property(m *onnx.Model, key string) string {
	for _, p := range m.Metadata {
		if p.Key == key {
			return p.Value
		}
	}
	return "<none>"
}

func TestMetadataRecordsThePreprocessing(t *testing.T) {
	net := network(t, "deit_tiny_distilled_patch16_224", model.Overrides{NumClasses: 3})
	m, err := Export(net, Options{Eval: evalPipeline(t, 224, 3), Classes: []string{"cat", "dog", "emu"}, BothHeads: true})
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{
		"model":               "deit_tiny_distilled_patch16_224",
		"image_size":          "224",
		"channels":            "3",
		"color":               "RGB",
		"mean":                "[0.5,0.5,0.5]",
		"std":                 "[0.25,0.25,0.25]",
		"resize_shorter_side": "256",
		"center_crop":         "224x224",
		"interpolation":       "bicubic",
		"classes":             `["cat","dog","emu"]`,
		"preprocessing":       "resize the shorter side to 256, keeping the aspect ratio (bicubic); crop the central 224×224; scale pixels to [0, 1]; normalise each channel: (x − mean) / std",
	} {
		if got := property(m, key); got != want {
			t.Errorf("metadata %q = %q, want %q", key, got, want)
		}
	}
	if out := property(m, "output"); !strings.Contains(out, "mean of the class head") || !strings.Contains(out, "cls_logits and dist_logits") {
		t.Errorf("output: %q", out)
	}
	if spec := property(m, "vit_train.model"); !strings.Contains(spec, `"distilled":true`) || !strings.Contains(spec, `"num_classes":3`) {
		t.Errorf("vit_train.model: %s", spec)
	}
	var outs []string
	for _, o := range m.Graph.Outputs {
		outs = append(outs, o.Name)
	}
	if !slices.Equal(outs, []string{Logits, ClsLogits, DistLogits}) {
		t.Errorf("outputs %v", outs)
	}

	small := network(t, "vit_fmnist_patch4_28", model.Overrides{})
	m, err = Export(small, Options{Eval: evalPipeline(t, 28, 1)})
	if err != nil {
		t.Fatal(err)
	}
	if got := property(m, "resize"); got != "28x28" || property(m, "color") != "grayscale" || property(m, "classes") != "<none>" {
		t.Errorf("fmnist: resize %q, color %q, classes %q", got, property(m, "color"), property(m, "classes"))
	}
}

// TestMetadataRecordsTheArchitecturesOwnConfigKey checks that each
// architecture's configuration is recorded under the key it registered,
// as a checkpoint records it, and under no other architecture's key.
func TestMetadataRecordsTheArchitecturesOwnConfigKey(t *testing.T) {
	for _, c := range []struct {
		name     string
		o        model.Overrides
		arch     string
		key      string
		size, ch int
	}{
		{"vit_fmnist_patch4_28", model.Overrides{}, "vit", "vit_train.model", 28, 1},
		{"resnet20", model.Overrides{Channels: 1, ImageSize: 28, NumClasses: 10}, "resnet", "vit_train.resnet", 28, 1},
	} {
		net := network(t, c.name, c.o)
		m, err := Export(net, Options{Eval: evalPipeline(t, c.size, c.ch)})
		if err != nil {
			t.Fatal(err)
		}
		if got := property(m, "vit_train.arch"); got != c.arch {
			t.Errorf("%s: vit_train.arch = %q, want %q", c.name, got, c.arch)
		}
		spec, err := model.DecodeSpec(c.arch, []byte(property(m, c.key)))
		if err != nil || spec != net.Spec() {
			t.Errorf("%s: %s = %s decodes to %+v, %v; want %+v", c.name, c.key, property(m, c.key), spec, err, net.Spec())
		}
		for _, a := range model.Architectures() {
			if a.ConfigKey != c.key && property(m, a.ConfigKey) != "<none>" {
				t.Errorf("%s: the metadata has %s's key %q", c.name, a.Name, a.ConfigKey)
			}
		}
	}
}

func TestQKVWithoutBias(t *testing.T) {
	c := vit.Config{Name: "nobias", ImageSize: 8, PatchSize: 4, Channels: 1, NumClasses: 2, EmbedDim: 8, Depth: 1, Heads: 2, MLPDim: 16, LayerNormEps: 1e-6}
	net, err := c.Build(1)
	if err != nil {
		t.Fatal(err)
	}
	exported, err := Export(net, Options{Eval: evalPipeline(t, 8, 1)})
	if err != nil {
		t.Fatal(err)
	}
	checkInitializers(t, net, exported)
}

func TestExportErrors(t *testing.T) {
	plain := network(t, "vit_fmnist_patch4_28", model.Overrides{})
	resnet20 := network(t, "resnet20", model.Overrides{Channels: 1, ImageSize: 28, NumClasses: 10})
	ok := evalPipeline(t, 28, 1)
	wrongSize := evalPipeline(t, 32, 1)
	threeChannels := evalPipeline(t, 28, 3)
	withFlip := ok
	withFlip.Transform = augment.Compose(ok.Transform, augment.HFlip{P: 1})
	for _, c := range []struct {
		net  model.Network
		o    Options
		want string
	}{
		{plain, Options{Eval: ok, BothHeads: true}, "one head"},
		{resnet20, Options{Eval: ok, BothHeads: true}, "one head"},
		{plain, Options{Eval: wrongSize}, "makes 32×32 images, the model takes 28×28"},
		{plain, Options{Eval: threeChannels}, "3 means and 3 stds, the model takes 1 channels"},
		{plain, Options{Eval: ok, Classes: []string{"a"}}, "1 class names for 10 classes"},
		{plain, Options{Eval: withFlip}, "augment.HFlip cannot be described"},
	} {
		_, err := Export(c.net, c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.net.Spec().Name()) {
			t.Errorf("got %v, want an error naming %s and containing %q", err, c.net.Spec().Name(), c.want)
		}
	}
}
