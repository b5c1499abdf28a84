package nn

import (
	"math"
	"slices"
	"strings"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/blas"
	"github.com/vit-train/vit-train/nn/ops"
)

// Sizes of the linear classifier the tests build: batch B, features D,
// classes C.
const (
	testB = 3
	testD = 4
	testC = 5
)

// linearGraph is the graph of logits = x·Wᵀ + b for x (B, D), W (C, D) and
// b (C), with a second head x·Vᵀ when distilled; its parameters are W and
// b (and V).
func linearGraph(t *testing.T, training, distilled bool) (*Graph, [][]float32) {
	t.Helper()
	g := gorgonia.NewGraph()
	img := tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(testB, testD))
	x := gorgonia.NewTensor(g, tensor.Float32, 2, gorgonia.WithShape(testB, testD), gorgonia.WithName("images"), gorgonia.WithValue(img))
	param := func(name string, shape ...int) (*gorgonia.Node, []float32) {
		v := tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(shape...))
		data := v.Data().([]float32)
		for i := range data {
			data[i] = float32(math.Sin(float64(len(name)*31 + i)))
		}
		return gorgonia.NewTensor(g, tensor.Float32, len(shape), gorgonia.WithShape(shape...), gorgonia.WithName(name), gorgonia.WithValue(v)), data
	}
	w, wd := param("w", testC, testD)
	b, bd := param("b", testC)
	logits, err := ops.Linear(x, w, b)
	if err != nil {
		t.Fatal(err)
	}
	gr := &Graph{Training: training, Batch: testB, G: g, Images: x, ImageData: img.Data(), Logits: logits, ParamNodes: []*gorgonia.Node{w, b}}
	weights := [][]float32{wd, bd}
	if distilled {
		v, vd := param("head_dist", testC, testD)
		if gr.DistLogits, err = ops.Linear(x, v, nil); err != nil {
			t.Fatal(err)
		}
		gr.ParamNodes = append(gr.ParamNodes, v)
		weights = append(weights, vd)
	}
	images, err := gr.Float32Images()
	if err != nil {
		t.Fatal(err)
	}
	for i := range images {
		images[i] = float32(math.Cos(float64(3 * i)))
	}
	return gr, weights
}

// linearLogits computes x·Wᵀ + b in float64.
func linearLogits(x, w, b []float32) []float64 {
	out := make([]float64, testB*testC)
	for i := range testB {
		for c := range testC {
			s := 0.0
			if b != nil {
				s = float64(b[c])
			}
			for d := range testD {
				s += float64(x[i*testD+d]) * float64(w[c*testD+d])
			}
			out[i*testC+c] = s
		}
	}
	return out
}

func TestFloat32ImagesRejectsOtherData(t *testing.T) {
	if _, err := (&Graph{}).Float32Images(); err == nil || !strings.Contains(err.Error(), "no image data") {
		t.Fatalf("a graph without images: %v", err)
	}
	if _, err := (&Graph{ImageData: []float64{1}}).Float32Images(); err == nil || !strings.Contains(err.Error(), "[]float64") {
		t.Fatalf("a float64 graph: %v", err)
	}
}

// TestPredictionsAverageTheHeads checks Run, HeadLogits and Predictions:
// one head as it is, two heads averaged as DeiT's inference does.
func TestPredictionsAverageTheHeads(t *testing.T) {
	for _, distilled := range []bool{false, true} {
		gr, weights := linearGraph(t, false, distilled)
		if err := gr.Run(); err != nil {
			t.Fatal(err)
		}
		x, _ := gr.Float32Images()
		want := linearLogits(x, weights[0], weights[1])
		if distilled {
			dist := linearLogits(x, weights[2], nil)
			for i := range want {
				want[i] = (want[i] + dist[i]) / 2
			}
		}
		got := gr.Predictions(nil)
		if len(got) != len(want) {
			t.Fatalf("distilled %v: %d predictions, want %d", distilled, len(got), len(want))
		}
		for i := range want {
			if math.Abs(float64(got[i])-want[i]) > 1e-5 {
				t.Fatalf("distilled %v: prediction %d = %g, want %g", distilled, i, got[i], want[i])
			}
		}
		head := gr.HeadLogits(gr.Logits, nil)
		cls := linearLogits(x, weights[0], weights[1])
		for i := range cls {
			if math.Abs(float64(head[i])-cls[i]) > 1e-5 {
				t.Fatalf("distilled %v: class logit %d = %g, want %g", distilled, i, head[i], cls[i])
			}
		}
	}
}

func TestFreezeWeightsNeedsAnEvaluationGraph(t *testing.T) {
	gr, _ := linearGraph(t, true, false)
	if err := gr.FreezeWeights(); err == nil || gr.Frozen() {
		t.Fatal("a training graph was frozen")
	}
	ev, _ := linearGraph(t, false, false)
	if err := ev.FreezeWeights(); err != nil || !ev.Frozen() {
		t.Fatalf("freezing an evaluation graph: %v, frozen %v", err, ev.Frozen())
	}
}

// crossEntropy is the loss and its gradients for the linear classifier
// with one-hot targets, in float64: dL/dz = (softmax(z) − y)/B, dW =
// dzᵀ·x, db = Σ_B dz.
func crossEntropy(x, w, b []float32, label []int) (loss float64, dw, db []float64) {
	z := linearLogits(x, w, b)
	dw, db = make([]float64, testC*testD), make([]float64, testC)
	for i := range testB {
		row := z[i*testC : (i+1)*testC]
		m := slices.Max(row)
		sum := 0.0
		for _, v := range row {
			sum += math.Exp(v - m)
		}
		loss -= (row[label[i]] - m - math.Log(sum)) / testB
		for c := range testC {
			dz := math.Exp(row[c]-m) / sum
			if c == label[i] {
				dz--
			}
			dz /= testB
			db[c] += dz
			for d := range testD {
				dw[c*testD+d] += dz * float64(x[i*testD+d])
			}
		}
	}
	return loss, dw, db
}

// TestStepComputesLossAndGradients checks Differentiate, Run, LossValue,
// Grad and RunReportingGrads against the closed-form gradients of a
// linear classifier's cross-entropy.
func TestStepComputesLossAndGradients(t *testing.T) {
	gr, weights := linearGraph(t, true, false)
	targetsNode, targets := gr.Input("targets", testB, testC)
	label := []int{1, 4, 0}
	soft := targets.Data().([]float32)
	for i, l := range label {
		soft[i*testC+l] = 1
	}
	loss, err := ops.SoftTargetCrossEntropy(gr.Logits, targetsNode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gr.Differentiate(gr.Logits); err == nil {
		t.Fatal("a non-scalar loss was differentiated")
	}
	step, err := gr.Differentiate(loss)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := gr.Float32Images()
	wantLoss, dw, db := crossEntropy(x, weights[0], weights[1], label)
	check := func(how string) {
		t.Helper()
		if l := step.LossValue(); math.Abs(l-wantLoss) > 1e-5 {
			t.Fatalf("%s: loss %g, want %g", how, l, wantLoss)
		}
		for i, want := range [][]float64{dw, db} {
			got, err := step.Grad(i)
			if err != nil {
				t.Fatal(err)
			}
			for k := range want {
				if math.Abs(float64(got[k])-want[k]) > 1e-5 {
					t.Fatalf("%s: gradient %d [%d] = %g, want %g", how, i, k, got[k], want[k])
				}
			}
		}
	}
	if err := step.Run(); err != nil {
		t.Fatal(err)
	}
	check("Run")
	if _, err := step.Grad(2); err == nil {
		t.Fatal("gradient 2 of 2 was returned")
	}
	seen := make([]int, len(step.Grads))
	if err := step.RunReportingGrads(func(i int) error { seen[i]++; return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(seen, []int{1, 1}) {
		t.Fatalf("gradients reported %v times, want once each", seen)
	}
	check("RunReportingGrads")
}

// TestKeepWeightsPacked checks that a training graph's low-precision
// linear layer keeps its weight packed and is returned under the weight's
// parameter (not the bias's), that a float32 layer keeps nothing, and
// that an evaluation graph is refused.
func TestKeepWeightsPacked(t *testing.T) {
	v := blas.Mixed()
	if v.IsFP32() {
		t.Skip("no low-precision product faster than float32 on this processor")
	}
	build := func(training bool, v blas.Variant) *Graph {
		g := gorgonia.NewGraph()
		x := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(8, 64), gorgonia.WithName("x"))
		w := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(70, 64), gorgonia.WithName("w"))
		b := gorgonia.NewVector(g, tensor.Float32, gorgonia.WithShape(70), gorgonia.WithName("b"))
		y, err := ops.LinearAs(v, x, w, b)
		if err != nil {
			t.Fatal(err)
		}
		return &Graph{Training: training, Batch: 8, G: g, Images: x, Logits: y, ParamNodes: []*gorgonia.Node{w, b}}
	}
	packers, err := build(true, v).KeepWeightsPacked()
	if err != nil {
		t.Fatal(err)
	}
	if len(packers) != 2 || len(packers[0]) != 1 || len(packers[1]) != 0 {
		t.Fatalf("packers by parameter (w, b): %d parameters, %v", len(packers), packers)
	}
	if packers, err := build(true, blas.FP32).KeepWeightsPacked(); err != nil || len(packers[0])+len(packers[1]) != 0 {
		t.Fatalf("a float32 layer: %v, %v", packers, err)
	}
	if _, err := build(false, v).KeepWeightsPacked(); err == nil || !strings.Contains(err.Error(), "FreezeWeights") {
		t.Fatalf("an evaluation graph: %v, want an error pointing to FreezeWeights", err)
	}
}
