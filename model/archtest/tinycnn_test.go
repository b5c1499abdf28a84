// Package archtest_test registers a third architecture, a tiny CNN, from a
// test and runs it through train.Run: train, checkpoint, resume and
// evaluate reach a network only through model.Network and model.Config,
// whatever the architecture.
package archtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/augment"
	"github.com/vit-train/vit-train/formats/metrics"
	"github.com/vit-train/vit-train/formats/safetensors"
	"github.com/vit-train/vit-train/interop/onnxexport"
	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/nn"
	"github.com/vit-train/vit-train/nn/blas"
	"github.com/vit-train/vit-train/nn/ops"
	"github.com/vit-train/vit-train/optim"
	"github.com/vit-train/vit-train/train"
)

// tinyArch is the registered name of the architecture and of its one
// preset.
const tinyArch = "tinycnn"

// kernel is the convolution's kernel size and stride: non-overlapping
// kernel × kernel patches.
const kernel = 4

func init() {
	model.Register(model.Architecture{
		Name:      tinyArch,
		ConfigKey: "vit_train.tinycnn",
		Presets:   func() []string { return []string{tinyArch} },
		Preset: func(name string, o model.Overrides) (model.Config, bool, error) {
			if name != tinyArch {
				return nil, false, nil
			}
			c, err := tinyCNN{Filters: 8}.Override(o)
			return c, true, err
		},
		Decode: func(data []byte) (model.Config, error) {
			var c tinyCNN
			err := json.Unmarshal(data, &c)
			return c, err
		},
	})
}

// tinyCNN is conv(kernel × kernel, stride kernel) → ReLU → global average
// pool → linear: images (B, Channels, ImageSize, ImageSize) to logits
// (B, NumClasses).
type tinyCNN struct {
	Channels   int `json:"in_chans"`
	ImageSize  int `json:"img_size"`
	NumClasses int `json:"num_classes"`
	Filters    int `json:"filters"`
}

func (c tinyCNN) Architecture() string             { return tinyArch }
func (c tinyCNN) ModelName() string                { return tinyArch }
func (c tinyCNN) InputShape() (channels, size int) { return c.Channels, c.ImageSize }
func (c tinyCNN) Classes() int                     { return c.NumClasses }

func (c tinyCNN) WithInput(size, classes int) model.Config {
	if size > 0 {
		c.ImageSize = size
	}
	if classes > 0 {
		c.NumClasses = classes
	}
	return c
}

func (c tinyCNN) Resolve(channels, size, classes int) model.Config {
	if c.Channels == 0 {
		c.Channels = channels
	}
	if c.ImageSize == 0 {
		c.ImageSize = size
	}
	if c.NumClasses == 0 {
		c.NumClasses = classes
	}
	return c
}

func (c tinyCNN) Override(o model.Overrides) (model.Config, error) {
	if o.ChangesShape() || o.ChangesRegularisation() {
		return nil, fmt.Errorf("model %s: only img_size, num_classes and in_chans apply", tinyArch)
	}
	c.Channels = model.Keep(o.Channels, c.Channels)
	c.ImageSize = model.Keep(o.ImageSize, c.ImageSize)
	c.NumClasses = model.Keep(o.NumClasses, c.NumClasses)
	return c, nil
}

func (c tinyCNN) Summary() string {
	return fmt.Sprintf("%d filters of %d×%d", c.Filters, kernel, kernel)
}

func (c tinyCNN) ParamCount() int {
	n := 0
	for _, p := range c.params() {
		n += size(p.Shape)
	}
	return n
}

// ForwardFLOPs counts the convolution and fc.
func (c tinyCNN) ForwardFLOPs() int64 {
	cells := (c.ImageSize / kernel) * (c.ImageSize / kernel)
	return 2 * int64(cells*c.Filters*c.Channels*kernel*kernel+c.Filters*c.NumClasses)
}

func (c tinyCNN) Validate() error {
	for _, f := range []struct {
		name   string
		v, max int
	}{{"in_chans", c.Channels, 16}, {"num_classes", c.NumClasses, 1 << 12}, {"filters", c.Filters, 1 << 10}, {"img_size", c.ImageSize, 1 << 12}} {
		if f.v < 1 || f.v > f.max {
			return fmt.Errorf("model %s: %s is %d, want 1 to %d", tinyArch, f.name, f.v, f.max)
		}
	}
	if c.ImageSize < kernel {
		return fmt.Errorf("model %s: img_size %d is below the kernel's %d", tinyArch, c.ImageSize, kernel)
	}
	return nil
}

// params are the parameters' names and shapes, in Params order.
func (c tinyCNN) params() []optim.Param {
	return []optim.Param{
		{Name: "conv.weight", Shape: []int{c.Filters, c.Channels, kernel, kernel}},
		{Name: "conv.bias", Shape: []int{c.Filters}},
		{Name: "fc.weight", Shape: []int{c.NumClasses, c.Filters}},
		{Name: "fc.bias", Shape: []int{c.NumClasses}},
	}
}

func size(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// Build initialises the weights He-normal from seed, the biases at zero.
func (c tinyCNN) Build(seed uint64) (model.Network, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(seed, 0x7c))
	ps := c.params()
	for i := range ps {
		ps[i].Data = make([]float32, size(ps[i].Shape))
		if strings.HasSuffix(ps[i].Name, ".weight") {
			scale := math.Sqrt(2 / float64(size(ps[i].Shape[1:])))
			for j := range ps[i].Data {
				ps[i].Data[j] = float32(rng.NormFloat64() * scale)
			}
		}
	}
	return &tinyNet{cfg: c, params: ps}, nil
}

func (c tinyCNN) CheckTensors(tensors []safetensors.Tensor) error {
	want := c.params()
	if len(tensors) != len(want) {
		return fmt.Errorf("model %s: %d tensors, want %d", tinyArch, len(tensors), len(want))
	}
	for _, p := range want {
		i := 0
		for i < len(tensors) && tensors[i].Name != p.Name {
			i++
		}
		if i == len(tensors) {
			return fmt.Errorf("model %s: no tensor %q", tinyArch, p.Name)
		}
		if fmt.Sprint(tensors[i].Shape) != fmt.Sprint(p.Shape) {
			return fmt.Errorf("model %s: tensor %q has shape %v, want %v", tinyArch, p.Name, tensors[i].Shape, p.Shape)
		}
	}
	return nil
}

func (c tinyCNN) NoWeightDecay() []string { return nil }

func (c tinyCNN) LayerMap() optim.LayerMap {
	return optim.LayerMap{MaxLayer: 1, ID: func(name string) (int, error) {
		switch {
		case strings.HasPrefix(name, "conv."):
			return 0, nil
		case strings.HasPrefix(name, "fc."):
			return 1, nil
		}
		return 0, fmt.Errorf("model %s: no parameter %q", tinyArch, name)
	}}
}

func (c tinyCNN) IsHead(name string) bool { return strings.HasPrefix(name, "fc.") }

func (c tinyCNN) Convert(safetensors.Tensor, model.Config) ([]float32, string, bool, error) {
	return nil, "", false, nil
}

func (c tinyCNN) PyTorchLoad(path string) string {
	return fmt.Sprintf("model.load_state_dict(safetensors.torch.load_file(%q))", path)
}

// tinyNet is a tinyCNN's weights.
type tinyNet struct {
	cfg    tinyCNN
	params []optim.Param
	prec   blas.Variant
}

func (n *tinyNet) Spec() model.Spec            { return model.SpecOf(n.cfg) }
func (n *tinyNet) Describe() string            { return fmt.Sprintf("%s: %d filters", tinyArch, n.cfg.Filters) }
func (n *tinyNet) Params() []optim.Param       { return n.params }
func (n *tinyNet) SetPrecision(v blas.Variant) { n.prec = v }

func (n *tinyNet) Tensors() []safetensors.Tensor {
	out := make([]safetensors.Tensor, len(n.params))
	for i, p := range n.params {
		out[i] = safetensors.Tensor{Name: p.Name, DType: safetensors.F32, Shape: p.Shape, Data: p.Data}
	}
	return out
}

func (n *tinyNet) Graph(batch int, training bool, _ *ops.Randomness) (*nn.Graph, error) {
	if batch < 1 {
		return nil, fmt.Errorf("model %s: batch size must be positive, got %d", tinyArch, batch)
	}
	g := gorgonia.NewGraph()
	shape := tensor.Shape{batch, n.cfg.Channels, n.cfg.ImageSize, n.cfg.ImageSize}
	img := tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(shape...))
	x := gorgonia.NewTensor(g, tensor.Float32, 4, gorgonia.WithShape(shape...), gorgonia.WithName("images"), gorgonia.WithValue(img))
	nodes := make([]*gorgonia.Node, len(n.params))
	for i, p := range n.params {
		v := tensor.New(tensor.WithShape(p.Shape...), tensor.WithBacking(p.Data))
		nodes[i] = gorgonia.NewTensor(g, tensor.Float32, len(p.Shape), gorgonia.WithShape(p.Shape...), gorgonia.WithName(p.Name), gorgonia.WithValue(v))
	}
	h, err := ops.Conv2dAs(n.prec, x, nodes[0], nodes[1], kernel, 0)
	if err != nil {
		return nil, err
	}
	if h, err = ops.ReLU(h); err != nil {
		return nil, err
	}
	if h, err = ops.GlobalAvgPool(h); err != nil {
		return nil, err
	}
	logits, err := ops.LinearAs(n.prec, h, nodes[2], nodes[3])
	if err != nil {
		return nil, err
	}
	return &nn.Graph{Training: training, Batch: batch, G: g, Images: x, ImageData: img.Data(), Logits: logits, ParamNodes: nodes}, nil
}

func (n *tinyNet) SharingWeights(weights [][]float32) (model.Network, error) {
	if len(weights) != len(n.params) {
		return nil, fmt.Errorf("model %s: %d weights, want %d", tinyArch, len(weights), len(n.params))
	}
	ps := make([]optim.Param, len(n.params))
	for i, p := range n.params {
		if len(weights[i]) != len(p.Data) {
			return nil, fmt.Errorf("model %s: %s has %d values, want %d", tinyArch, p.Name, len(weights[i]), len(p.Data))
		}
		ps[i] = optim.Param{Name: p.Name, Shape: p.Shape, Data: weights[i]}
	}
	return &tinyNet{cfg: n.cfg, params: ps, prec: n.prec}, nil
}

// tinyConfig is a short run of the tiny CNN on the embedded Fashion-MNIST
// subset: 5 epochs of 16 steps.
func tinyConfig(t *testing.T) train.Config {
	t.Helper()
	cfg, err := train.DefaultConfig().Layer("", []string{"model.name=" + tinyArch, "model.drop_path_rate=0",
		"data.train_subset=512", "data.batch_size=32", "data.eval_subset=200", "data.eval_batch_size=64",
		"epochs=5", "optim.lr=0.03"})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestThirdArchitectureTrainsThroughRun trains the tiny CNN with
// train.Run; a second run, stopped after step 21 and resumed, ends with
// the same checkpoint tensors, state and score; the checkpoint records
// the tiny CNN's spec and evaluates, through train.OpenEval and
// train.Evaluate, to the run's last score.
func TestThirdArchitectureTrainsThroughRun(t *testing.T) {
	cfg := tinyConfig(t)
	ctx := context.Background()
	full, split := t.TempDir(), t.TempDir()
	sum, err := train.Run(ctx, cfg, train.Options{Dir: full})
	if err != nil {
		t.Fatal(err)
	}
	epochs, err := metrics.Read(full, "epochs")
	if err != nil {
		t.Fatal(err)
	}
	if len(epochs) != 5 || !(epochs[4]["train_loss"] < epochs[0]["train_loss"]) || !(sum.Last.Top1 > 20) {
		t.Fatalf("%d epochs, train loss %v → %v, top-1 %.2f%%: want 5 epochs, a falling loss and top-1 over twice chance (20%%)",
			len(epochs), epochs[0]["train_loss"], epochs[len(epochs)-1]["train_loss"], sum.Last.Top1)
	}

	if _, err := train.Run(ctx, cfg, train.Options{Dir: split, Hooks: train.Hooks{At: train.StopAfterSteps(21)}}); !errors.Is(err, train.ErrInterrupted) {
		t.Fatalf("want a stop after step 21, got %v", err)
	}
	resumed, err := train.Run(ctx, cfg, train.Options{Dir: split, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(resumed.Last.Result, sum.Last.Result) || resumed.State != sum.State {
		t.Fatalf("resumed run ends at %+v scoring %+v, the uninterrupted one at %+v scoring %+v", resumed.State, resumed.Last.Result, sum.State, sum.Last.Result)
	}
	a, err := train.LoadCheckpoint(filepath.Join(full, train.LastCheckpoint))
	if err != nil {
		t.Fatal(err)
	}
	b, err := train.LoadCheckpoint(filepath.Join(split, train.LastCheckpoint))
	if err != nil {
		t.Fatal(err)
	}
	if want := model.SpecOf(tinyCNN{Channels: 1, ImageSize: 28, NumClasses: 10, Filters: 8}); a.Spec != want {
		t.Fatalf("the checkpoint's spec is %+v, want %+v", a.Spec, want)
	}
	sameTensors(t, a.Params, b.Params)
	if len(a.Optim) == 0 || len(a.Optim) != len(b.Optim) {
		t.Fatalf("%d and %d optimiser tensors", len(a.Optim), len(b.Optim))
	}

	r, err := train.OpenEval(filepath.Join(full, train.LastCheckpoint), train.EvalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := train.Evaluate(ctx, r.Graph, r.Loader)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ev.Result, sum.Last.Result) {
		t.Fatalf("the checkpoint evaluates to %+v, the run's last evaluation was %+v", ev.Result, sum.Last.Result)
	}
}

// sameTensors fails unless a and b hold the same tensors bit for bit.
func sameTensors(t *testing.T, a, b []safetensors.Tensor) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%d and %d tensors", len(a), len(b))
	}
	for i := range a {
		if a[i].Name != b[i].Name || len(a[i].Data) != len(b[i].Data) {
			t.Fatalf("tensor %d: %s (%d values) and %s (%d values)", i, a[i].Name, len(a[i].Data), b[i].Name, len(b[i].Data))
		}
		for j := range a[i].Data {
			if math.Float32bits(a[i].Data[j]) != math.Float32bits(b[i].Data[j]) {
				t.Fatalf("%s[%d]: %g uninterrupted, %g resumed", a[i].Name, j, a[i].Data[j], b[i].Data[j])
			}
		}
	}
}

// TestExportRefusesAnArchitectureWithoutAnONNXGraph: the tiny CNN writes
// no ONNX graph (it does not implement model.ONNXWriter), and the
// exporter says so, naming the architecture, instead of writing a model.
func TestExportRefusesAnArchitectureWithoutAnONNXGraph(t *testing.T) {
	spec, err := model.Create(tinyArch, model.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	net, err := model.New(spec.Resolve(1, 28, 10), 1)
	if err != nil {
		t.Fatal(err)
	}
	pipeline, err := augment.EvalPipeline(augment.EvalConfig{Size: 28, CropPct: 1, Interp: augment.Bicubic, Mean: []float32{0.5}, Std: []float32{0.5}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = onnxexport.Export(net, onnxexport.Options{Eval: pipeline})
	if err == nil || !strings.Contains(err.Error(), `architecture "tinycnn" writes no ONNX graph`) {
		t.Fatalf("exporting the tiny CNN: %v", err)
	}
}
