package ops

import (
	"fmt"
	"hash"
	"math"
	"runtime"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/blas"
	"github.com/vit-train/vit-train/nn/parallel"
	"github.com/vit-train/vit-train/nn/vec"
)

// LayerNorm normalizes x over its last axis and applies a per-feature affine
// map, PyTorch's nn.LayerNorm(D, eps):
//
//	y = (x − mean) / sqrt(var + eps) · weight + bias
//
// with mean and biased variance taken over the D features of each row. x is
// (..., D), weight and bias are (D); y is shaped like x. The forward pass
// keeps each row's mean and 1/sqrt(var + eps) for the backward pass.
func LayerNorm(x, weight, bias *gorgonia.Node, eps float64) (*gorgonia.Node, error) {
	xs := x.Shape()
	if len(xs) < 1 {
		return nil, fmt.Errorf("LayerNorm: x %v needs at least 1 dim", xs)
	}
	d := xs[len(xs)-1]
	if d < 1 {
		return nil, fmt.Errorf("LayerNorm: x %v has no features", xs)
	}
	for _, p := range []struct {
		name string
		n    *gorgonia.Node
	}{{"weight", weight}, {"bias", bias}} {
		if p.n == nil {
			return nil, fmt.Errorf("LayerNorm: %s is nil", p.name)
		}
		if s := p.n.Shape(); len(s) != 1 || s[0] != d {
			return nil, fmt.Errorf("LayerNorm: %s %v does not match x %v: want (%d)", p.name, s, xs, d)
		}
	}
	if !(eps >= 0) || math.IsInf(eps, 0) {
		return nil, fmt.Errorf("LayerNorm: eps %v is not a finite value ≥ 0", eps)
	}
	op := &layerNormOp{id: uniqueID(), eps: eps, dims: len(xs)}
	op.base = base{name: "LayerNorm", arity: 3, params: func(h hash.Hash) { fmt.Fprint(h, op.eps, op.dims) }}
	return gorgonia.ApplyOp(op, x, weight, bias)
}

// layerNormOp is y = LayerNorm(x, weight, bias). It owns the per-row mean
// and rstd = 1/sqrt(var + eps) of its last run, read by its backward nodes.
type layerNormOp struct {
	base
	id         uint64 // names the op in the hashes of its backward nodes
	eps        float64
	dims       int
	mean, rstd []float64
	// y converted row by row for the linear layer that reads it.
	outputConversion
}

func (op *layerNormOp) Type() hm.Type { return fnType(op.dims, op.dims, 1, 1) }

func (op *layerNormOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapeOf(in, 0)
	if err != nil {
		return nil, err
	}
	return s.Clone(), nil
}

func (op *layerNormOp) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, in...)
}

func (op *layerNormOp) UsePreallocDo(prealloc gorgonia.Value, in ...gorgonia.Value) (gorgonia.Value, error) {
	dt, err := checkDtypes("LayerNorm", in...)
	if err != nil {
		return nil, err
	}
	s := in[0].Shape()
	d := s[len(s)-1]
	rows := s.TotalSize() / d
	if cap(op.mean) < rows {
		op.mean, op.rstd = make([]float64, rows), make([]float64, rows)
	}
	op.mean, op.rstd = op.mean[:rows], op.rstd[:rows]
	out := output(prealloc, dt, s)
	if dt == tensor.Float32 {
		y := floats[float32](out)
		conv := op.converted.start(rows, d)
		parallelRows(rows, d, layerNormRows32{floats[float32](in[0]), floats[float32](in[1])[:d], floats[float32](in[2])[:d], y, op.mean, op.rstd, op.eps, conv})
		op.converted.finish(conv, y)
	} else {
		parallelRows(rows, d, layerNormRows[float64]{floats[float64](in[0]), floats[float64](in[1])[:d], floats[float64](in[2])[:d], floats[float64](out), op.mean, op.rstd, op.eps})
	}
	return out, nil
}

// layerNormRows normalizes rows of len(w) elements of x into y, recording
// each row's mean and 1/std.
type layerNormRows[T Float] struct {
	x, w, b, y []T
	mean, rstd []float64
	eps        float64
}

func (k *layerNormRows[T]) Range(lo, hi int) {
	d := len(k.w)
	for r := lo; r < hi; r++ {
		xr, yr := k.x[r*d:(r+1)*d], k.y[r*d:(r+1)*d]
		m := sumF64(xr) / float64(d)
		s := 1 / math.Sqrt(sumSqDevF64(xr, m)/float64(d)+k.eps)
		k.mean[r], k.rstd[r] = m, s
		mt, st := T(m), T(s)
		yr, w, b := yr[:len(xr)], k.w[:len(xr)], k.b[:len(xr)] // no bounds checks below
		for j, v := range xr {
			yr[j] = (v-mt)*st*w[j] + b[j]
		}
	}
}

// layerNormRows32 is layerNormRows in float32 with the SIMD kernels of
// package vec: the row mean and variance in two passes with float32 sums,
// 1/sqrt(var + eps) in float64. Each row of y is converted into conv (nil:
// none) as soon as it is made.
type layerNormRows32 struct {
	x, w, b, y []float32
	mean, rstd []float64
	eps        float64
	conv       *blas.ConvertedA
}

func (k *layerNormRows32) Range(lo, hi int) {
	d := len(k.w)
	for r := lo; r < hi; r++ {
		xr, yr := k.x[r*d:(r+1)*d], k.y[r*d:(r+1)*d]
		m, v := vec.MeanVar(xr)
		s := 1 / math.Sqrt(float64(v)+k.eps)
		k.mean[r], k.rstd[r] = float64(m), s
		vec.LayerNormRow(yr, xr, k.w, k.b, m, float32(s))
		if k.conv != nil {
			k.conv.Convert(k.y, d, r, r+1, 0, d)
		}
	}
}

// sumSqDevF64 returns Σ (x − m)², accumulated in float64.
func sumSqDevF64[T Float](x []T, m float64) float64 {
	var a0, a1, a2, a3 float64
	for ; len(x) >= 4; x = x[4:] {
		d0, d1, d2, d3 := float64(x[0])-m, float64(x[1])-m, float64(x[2])-m, float64(x[3])-m
		a0 += d0 * d0
		a1 += d1 * d1
		a2 += d2 * d2
		a3 += d3 * d3
	}
	for _, v := range x {
		d := float64(v) - m
		a0 += d * d
	}
	return (a0 + a1) + (a2 + a3)
}

func (op *layerNormOp) DiffWRT(inputs int) []bool { return []bool{true, true, true} }

// SymDiff builds dx = LayerNormGradInput(x, weight, y, dy), dweight =
// LayerNormGradWeight(x, y, dy) and dbias = SumRows(dy). The backward nodes
// take y only to run after the forward node, whose saved statistics they read.
func (op *layerNormOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	x, w := inputs[0], inputs[1]
	dx, err := gorgonia.ApplyOp(newLayerNormGrad(op, false), x, w, output, grad)
	if err != nil {
		return nil, err
	}
	dw, err := gorgonia.ApplyOp(newLayerNormGrad(op, true), x, output, grad)
	if err != nil {
		return nil, err
	}
	db, err := gorgonia.ApplyOp(newSumRows(grad.Dims()), grad)
	if err != nil {
		return nil, err
	}
	return gorgonia.Nodes{dx, dw, db}, nil
}

// layerNormGrad computes, from the statistics saved by fwd, either
//
//	dx = rstd · (g − mean(g) − x̂ · mean(g·x̂)),  g = dy·weight, x̂ = (x − mean)·rstd
//
// from (x, weight, y, dy), or (weight) dweight = Σ_rows dy·x̂ from (x, y, dy).
type layerNormGrad struct {
	base
	fwd     *layerNormOp
	weight  bool
	partial []float64 // per-worker partial sums of dweight
}

func newLayerNormGrad(fwd *layerNormOp, weight bool) *layerNormGrad {
	op := &layerNormGrad{fwd: fwd, weight: weight}
	name, arity := "LayerNormGradInput", 4
	if weight {
		name, arity = "LayerNormGradWeight", 3
	}
	op.base = base{name: name, arity: arity, params: func(h hash.Hash) { fmt.Fprint(h, fwd.id) }}
	return op
}

func (op *layerNormGrad) Type() hm.Type {
	n := op.fwd.dims
	if op.weight {
		return fnType(1, n, n, n)
	}
	return fnType(n, n, 1, n, n)
}

func (op *layerNormGrad) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapeOf(in, 0)
	if err != nil {
		return nil, err
	}
	if op.weight {
		return tensor.Shape{s[len(s)-1]}, nil
	}
	return s.Clone(), nil
}

func (op *layerNormGrad) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, in...)
}

func (op *layerNormGrad) UsePreallocDo(prealloc gorgonia.Value, in ...gorgonia.Value) (gorgonia.Value, error) {
	dt, err := checkDtypes(op.name, in...)
	if err != nil {
		return nil, err
	}
	s := in[0].Shape()
	d := s[len(s)-1]
	if rows := s.TotalSize() / d; len(op.fwd.mean) != rows {
		return nil, fmt.Errorf("%s: the forward LayerNorm has not run on %v", op.name, s)
	}
	if op.weight {
		out := output(prealloc, dt, tensor.Shape{d})
		if dt == tensor.Float32 {
			op.partial = layerNormGradWeight(floats[float32](in[0]), floats[float32](in[2]), floats[float32](out), op.fwd.mean, op.fwd.rstd, op.partial)
		} else {
			op.partial = layerNormGradWeight(floats[float64](in[0]), floats[float64](in[2]), floats[float64](out), op.fwd.mean, op.fwd.rstd, op.partial)
		}
		return out, nil
	}
	out := output(prealloc, dt, s)
	if dt == tensor.Float32 {
		layerNormGradInput(floats[float32](in[0]), floats[float32](in[1]), floats[float32](in[3]), floats[float32](out), op.fwd.mean, op.fwd.rstd)
	} else {
		layerNormGradInput(floats[float64](in[0]), floats[float64](in[1]), floats[float64](in[3]), floats[float64](out), op.fwd.mean, op.fwd.rstd)
	}
	return out, nil
}

func layerNormGradInput[T Float](x, w, dy, dx []T, mean, rstd []float64) {
	if x32, ok := any(x).([]float32); ok {
		parallelRows(len(mean), len(w), layerNormGradRows32{x32, any(w).([]float32), any(dy).([]float32), any(dx).([]float32), mean, rstd})
		return
	}
	parallelRows(len(mean), len(w), layerNormGradRows[T]{x, w, dy, dx, mean, rstd})
}

// layerNormGradRows sets dx, row by row, from the rows' dy, x, mean and
// 1/std.
type layerNormGradRows[T Float] struct {
	x, w, dy, dx []T
	mean, rstd   []float64
}

func (k *layerNormGradRows[T]) Range(lo, hi int) {
	d := len(k.w)
	for r := lo; r < hi; r++ {
		xr, gr, dr := k.x[r*d:(r+1)*d], k.dy[r*d:(r+1)*d], k.dx[r*d:(r+1)*d]
		mt, st := T(k.mean[r]), T(k.rstd[r])
		sg, sgx := layerNormGradSums(xr, gr, k.w, mt, st)
		a, c := T(sg/float64(d)), T(sgx/float64(d))
		gr, w, dr := gr[:len(xr)], k.w[:len(xr)], dr[:len(xr)]
		for j, v := range xr {
			dr[j] = st * (gr[j]*w[j] - a - (v-mt)*st*c)
		}
	}
}

// layerNormGradRows32 is layerNormGradRows with the SIMD kernels of package
// vec.
type layerNormGradRows32 struct {
	x, w, dy, dx []float32
	mean, rstd   []float64
}

func (k *layerNormGradRows32) Range(lo, hi int) {
	d := len(k.w)
	for r := lo; r < hi; r++ {
		xr, gr, dr := k.x[r*d:(r+1)*d], k.dy[r*d:(r+1)*d], k.dx[r*d:(r+1)*d]
		mt, st := float32(k.mean[r]), float32(k.rstd[r])
		sg, sgx := vec.LayerNormGradSums(xr, gr, k.w, mt, st)
		vec.LayerNormGradRow(dr, xr, gr, k.w, mt, st, float32(float64(sg)/float64(d)), float32(float64(sgx)/float64(d)))
	}
}

// layerNormGradSums returns Σ g and Σ g·x̂ over a row, g = dy·weight and
// x̂ = (x − mean)·rstd, with two accumulators per sum.
func layerNormGradSums[T Float](x, dy, w []T, mean, rstd T) (sg, sgx float64) {
	dy, w = dy[:len(x)], w[:len(x)]
	var sg1, sgx1 float64
	j := 0
	for ; j+1 < len(x); j += 2 {
		g0, g1 := dy[j]*w[j], dy[j+1]*w[j+1]
		sg += float64(g0)
		sg1 += float64(g1)
		sgx += float64(g0 * (x[j] - mean) * rstd)
		sgx1 += float64(g1 * (x[j+1] - mean) * rstd)
	}
	if j < len(x) {
		g := dy[j] * w[j]
		sg += float64(g)
		sgx += float64(g * (x[j] - mean) * rstd)
	}
	return sg + sg1, sgx + sgx1
}

// layerNormGradWeight sets dw = Σ_rows dy·x̂. Each worker sums its rows into
// its own slice of partial (grown as needed and returned); the slices are
// then added up.
func layerNormGradWeight[T Float](x, dy, dw []T, mean, rstd, partial []float64) []float64 {
	d, rows := len(dw), len(mean)
	workers := parallelWorkers(rows, max(1, rowsWorkGrain/d))
	if cap(partial) < workers*d {
		partial = make([]float64, workers*d)
	}
	partial = partial[:workers*d]
	parallel.Loop(workers, 1, layerNormGradWeightPartials[T]{x, dy, mean, rstd, partial, d, (rows + workers - 1) / workers})
	for j := range dw {
		s := 0.0
		for wk := range workers {
			s += partial[wk*d+j]
		}
		dw[j] = T(s)
	}
	return partial
}

// layerNormGradWeightPartials sums dy·x̂ over the rows of each worker
// wk's chunk into partial[wk·d : (wk+1)·d].
type layerNormGradWeightPartials[T Float] struct {
	x, dy               []T
	mean, rstd, partial []float64
	d, chunk            int
}

func (k *layerNormGradWeightPartials[T]) Range(wlo, whi int) {
	d, rows := k.d, len(k.mean)
	for wk := wlo; wk < whi; wk++ {
		acc := k.partial[wk*d : (wk+1)*d]
		clear(acc)
		for r := wk * k.chunk; r < min((wk+1)*k.chunk, rows); r++ {
			xr, gr := k.x[r*d:(r+1)*d], k.dy[r*d:(r+1)*d]
			if x32, ok := any(xr).([]float32); ok {
				vec.LayerNormGradWeightAcc(acc, x32, any(gr).([]float32), float32(k.mean[r]), float32(k.rstd[r]))
				continue
			}
			mt, st := T(k.mean[r]), T(k.rstd[r])
			gr, acc := gr[:len(xr)], acc[:len(xr)]
			for j, v := range xr {
				acc[j] += float64(gr[j] * (v - mt) * st)
			}
		}
	}
}

// parallelWorkers is the number of partial sums a reduction over n items
// keeps: one per core, with at least grain items each.
func parallelWorkers(n, grain int) int {
	return max(1, min(runtime.GOMAXPROCS(0), n/max(grain, 1)))
}
