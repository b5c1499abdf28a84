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
// 1/sqrt(var + eps) in float64. The rows of y are converted into conv
// (nil: none) convertedRows at a time, as soon as they are made: one
// Convert (and, for a conversion that streams, one fence) a block.
type layerNormRows32 struct {
	x, w, b, y []float32
	mean, rstd []float64
	eps        float64
	conv       *blas.ConvertedA
}

// convertedRows is how many rows of its output LayerNorm makes before it
// converts them: 8 of ViT-B/16's (24 KiB) stay in L1.
const convertedRows = 8

func (k *layerNormRows32) Range(lo, hi int) {
	d := len(k.w)
	for r0 := lo; r0 < hi; r0 += convertedRows {
		r1 := min(r0+convertedRows, hi)
		for r := r0; r < r1; r++ {
			xr, yr := k.x[r*d:(r+1)*d], k.y[r*d:(r+1)*d]
			m, v := vec.MeanVar(xr)
			s := 1 / math.Sqrt(float64(v)+k.eps)
			k.mean[r], k.rstd[r] = float64(m), s
			vec.LayerNormRow(yr, xr, k.w, k.b, m, float32(s))
		}
		if k.conv != nil {
			k.conv.Convert(k.y, d, r0, r1, 0, d)
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

// backwardInputs checks the inputs of a backward op of op's, named name:
// one dtype, and in[0] the rows of op's last forward run. It returns the
// dtype and in[0]'s rows and features.
func (op *layerNormOp) backwardInputs(name string, in []gorgonia.Value) (dt tensor.Dtype, rows, d int, err error) {
	if dt, err = checkDtypes(name, in...); err != nil {
		return dt, 0, 0, err
	}
	s := in[0].Shape()
	d = s[len(s)-1]
	if rows = s.TotalSize() / d; len(op.mean) != rows {
		return dt, 0, 0, fmt.Errorf("%s: the forward LayerNorm has not run on %v", name, s)
	}
	return dt, rows, d, nil
}

func (op *layerNormOp) DiffWRT(inputs int) []bool { return []bool{true, true, true} }

// SymDiff builds dx = LayerNormGradInput(x, weight, y, dy), dweight =
// LayerNormGradWeight(x, y, dy, dx) and dbias = Σ_rows dy. The backward
// nodes take y only to run after the forward node, whose saved statistics
// they read; dweight takes dx only to run after it, as dx's pass over x and
// dy sums dweight's partials too (weightPartials).
//
// Where a linear layer with low-precision products reads y (mixed
// precision), that pass sums dbias's partials as well, and dbias =
// LayerNormGradBias(dy, dx) adds them up: each worker's chunk of rows
// summed in order, the chunks' sums added in order, as the linear
// layers' bias gradients are made there from sums of their own. Float32
// training keeps SumRows(dy) and its values.
func (op *layerNormOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	x, w := inputs[0], inputs[1]
	partials := &weightPartials{withBias: op.converted != nil}
	dx, err := gorgonia.ApplyOp(newLayerNormGrad(op, false, partials), x, w, output, grad)
	if err != nil {
		return nil, err
	}
	dw, err := gorgonia.ApplyOp(newLayerNormGrad(op, true, partials), x, output, grad, dx)
	if err != nil {
		return nil, err
	}
	var db *gorgonia.Node
	if partials.withBias {
		db, err = gorgonia.ApplyOp(newLayerNormGradBias(op, partials), grad, dx)
	} else {
		db, err = gorgonia.ApplyOp(newSumRows(grad.Dims()), grad)
	}
	if err != nil {
		return nil, err
	}
	return gorgonia.Nodes{dx, dw, db}, nil
}

// layerNormGrad computes, from the statistics saved by fwd, either
//
//	dx = rstd · (g − mean(g) − x̂ · mean(g·x̂)),  g = dy·weight, x̂ = (x − mean)·rstd
//
// from (x, weight, y, dy), or (weight) dweight = Σ_rows dy·x̂ from (x, y,
// dy, dx). The dx op sums dweight's partials in the same pass over x and
// dy, into partials, which the dweight op then adds up.
type layerNormGrad struct {
	base
	fwd      *layerNormOp
	weight   bool
	partials *weightPartials
}

// weightPartials are the partial sums of dweight = Σ_rows dy·x̂ over each
// worker's chunk of rows (see layerNormGradWeight) and, withBias, those of
// dbias = Σ_rows dy (see layerNormGradBias).
type weightPartials struct {
	sums []float64
	// from is the dy whose partials sums holds, set by the dx op's run
	// and cleared when the dweight op takes them.
	from madeFrom

	withBias bool
	// dbias's partial sums, in dy's type; biasFrom is the dy they are
	// of, cleared when the dbias op takes them.
	bias32   []float32
	bias64   []float64
	biasFrom madeFrom
}

// biasPartials readies n of p's partial sums of dbias in T and returns
// them, or nil without them (withBias false); they are no dy's until the
// run that sums them records it.
func biasPartials[T Float](p *weightPartials, n int) []T {
	if !p.withBias {
		return nil
	}
	p.biasFrom.clear()
	var zero T
	if _, ok := any(zero).(float32); ok {
		p.bias32 = grow(p.bias32, n)
	} else {
		p.bias64 = grow(p.bias64, n)
	}
	return readyBiasPartials[T](p)
}

// readyBiasPartials returns p's partial sums of dbias in T as the last
// run that readied them left them.
func readyBiasPartials[T Float](p *weightPartials) []T {
	if b, ok := any(p.bias32).([]T); ok {
		return b
	}
	return any(p.bias64).([]T)
}

// layerNormGradBias maps (dy, dx) to dbias = Σ_rows dy, the sums of each
// worker's chunk of rows added in order: those the dx op's pass summed
// where they are dy's (it takes dx only to run after that op), else
// summed here. It is the dbias of a LayerNorm whose output feeds
// low-precision products (see layerNormOp.SymDiff).
type layerNormGradBias struct {
	base
	fwd      *layerNormOp
	partials *weightPartials
}

func newLayerNormGradBias(fwd *layerNormOp, partials *weightPartials) *layerNormGradBias {
	op := &layerNormGradBias{fwd: fwd, partials: partials}
	op.base = base{name: "LayerNormGradBias", arity: 2, params: func(h hash.Hash) { fmt.Fprint(h, fwd.id) }}
	return op
}

func (op *layerNormGradBias) Type() hm.Type { return fnType(1, op.fwd.dims, op.fwd.dims) }

func (op *layerNormGradBias) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapeOf(in, 0)
	if err != nil {
		return nil, err
	}
	return tensor.Shape{s[len(s)-1]}, nil
}

func (op *layerNormGradBias) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, in...)
}

func (op *layerNormGradBias) UsePreallocDo(prealloc gorgonia.Value, in ...gorgonia.Value) (gorgonia.Value, error) {
	dt, rows, d, err := op.fwd.backwardInputs(op.name, in)
	if err != nil {
		return nil, err
	}
	out := output(prealloc, dt, tensor.Shape{d})
	if dt == tensor.Float32 {
		layerNormBiasSums(floats[float32](in[0]), floats[float32](out), rows, op.partials)
	} else {
		layerNormBiasSums(floats[float64](in[0]), floats[float64](out), rows, op.partials)
	}
	return out, nil
}

// OrdersOnly implements runner.OrderingInputs: dx is read only to run
// after the op that makes it.
func (op *layerNormGradBias) OrdersOnly(i int) bool { return i == 1 }

// layerNormBiasSums sets db = Σ_rows dy from the partial sums of each
// worker's chunk of rows, those of p where they are dy's, else summed
// here into p, added in order.
func layerNormBiasSums[T Float](dy, db []T, rows int, p *weightPartials) {
	d := len(db)
	var bias []T
	if p.biasFrom.take(firstOf(dy)) {
		bias = readyBiasPartials[T](p)
	} else {
		bias = biasPartials[T](p, gradChunks(rows, d)*d)
		parallel.Loop(len(bias)/d, 1, biasChunkSums[T]{dy, bias, rows, d})
	}
	clear(db)
	for wk := range len(bias) / d {
		addTo(db, bias[wk*d:(wk+1)*d])
	}
}

func newLayerNormGrad(fwd *layerNormOp, weight bool, partials *weightPartials) *layerNormGrad {
	op := &layerNormGrad{fwd: fwd, weight: weight, partials: partials}
	name, arity := "LayerNormGradInput", 4
	if weight {
		name = "LayerNormGradWeight"
	}
	op.base = base{name: name, arity: arity, params: func(h hash.Hash) { fmt.Fprint(h, fwd.id) }}
	return op
}

func (op *layerNormGrad) Type() hm.Type {
	n := op.fwd.dims
	if op.weight {
		return fnType(1, n, n, n, n)
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
	dt, _, d, err := op.fwd.backwardInputs(op.name, in)
	if err != nil {
		return nil, err
	}
	if op.weight {
		out := output(prealloc, dt, tensor.Shape{d})
		if dt == tensor.Float32 {
			layerNormGradWeight(floats[float32](in[0]), floats[float32](in[2]), floats[float32](out), op.fwd.mean, op.fwd.rstd, op.partials)
		} else {
			layerNormGradWeight(floats[float64](in[0]), floats[float64](in[2]), floats[float64](out), op.fwd.mean, op.fwd.rstd, op.partials)
		}
		return out, nil
	}
	return op.inputGradient(prealloc, dt, in, nil), nil
}

// inputGradient returns dx from in = (x, weight, y, dy), with addend (nil:
// none; else of x's shape) added to it.
func (op *layerNormGrad) inputGradient(prealloc gorgonia.Value, dt tensor.Dtype, in []gorgonia.Value, addend gorgonia.Value) gorgonia.Value {
	out := output(prealloc, dt, in[0].Shape())
	if dt == tensor.Float32 {
		layerNormGradInput(floats[float32](in[0]), floats[float32](in[1]), floats[float32](in[3]), floatsOrNil[float32](addend), floats[float32](out), op.fwd.mean, op.fwd.rstd, op.partials)
	} else {
		layerNormGradInput(floats[float64](in[0]), floats[float64](in[1]), floats[float64](in[3]), floatsOrNil[float64](addend), floats[float64](out), op.fwd.mean, op.fwd.rstd, op.partials)
	}
	return out
}

// OrdersOnly implements runner.OrderingInputs: y, and dx for dweight, are
// read only to run after the ops that make them.
func (op *layerNormGrad) OrdersOnly(i int) bool {
	if op.weight {
		return i == 1 || i == 3
	}
	return i == 2
}

// layerNormGradPlus is LayerNormGradInput(x, weight, y, dy) + addend, for
// an addend of x's shape: the input gradient with another gradient of x
// added to each row as the row is stored (MergeSum). It is the op of a
// runner step, not of a graph node.
type layerNormGradPlus struct {
	base
	grad *layerNormGrad
}

func newLayerNormGradPlus(grad *layerNormGrad) *layerNormGradPlus {
	return &layerNormGradPlus{base: base{name: "LayerNormGradInput+Add", arity: 5, params: func(h hash.Hash) { fmt.Fprint(h, grad.fwd.id) }}, grad: grad}
}

func (op *layerNormGradPlus) Type() hm.Type {
	n := op.grad.fwd.dims
	return fnType(n, n, 1, n, n, n)
}

func (op *layerNormGradPlus) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	return op.grad.InferShape(in...)
}

func (op *layerNormGradPlus) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, in...)
}

// UsePreallocDo computes dx + addend from in = (x, weight, y, dy, addend).
func (op *layerNormGradPlus) UsePreallocDo(prealloc gorgonia.Value, in ...gorgonia.Value) (gorgonia.Value, error) {
	if len(in) != 5 {
		return nil, fmt.Errorf("%s: %d inputs, want 5", op.name, len(in))
	}
	dt, _, _, err := op.grad.fwd.backwardInputs(op.name, in)
	if err != nil {
		return nil, err
	}
	if s := in[0].Shape(); !in[4].Shape().Eq(s) {
		return nil, fmt.Errorf("%s: addend %v is not shaped like x %v", op.name, in[4].Shape(), s)
	}
	return op.grad.inputGradient(prealloc, dt, in[:4], in[4]), nil
}

// layerNormGradInput sets dx, plus addend where addend is not nil, and,
// in the same pass over x and dy, partials's sums of dweight, one per
// worker's chunk of rows as layerNormGradWeight takes them.
func layerNormGradInput[T Float](x, w, dy, addend, dx []T, mean, rstd []float64, partials *weightPartials) {
	d := len(w)
	sums := partials.start(len(mean), d)
	rows := layerNormGradRows[T]{x, w, dy, addend, dx, mean, rstd}
	bias := biasPartials[T](partials, len(sums))
	parallel.Loop(len(sums)/d, 1, layerNormGradInputAndWeight[T]{rows, layerNormGradWeightPartials[T]{x, dy, mean, rstd, sums, bias, d}})
	partials.from.set(firstOf(dy))
	if bias != nil {
		partials.biasFrom.set(firstOf(dy))
	}
}

// layerNormGradRows sets dx, row by row, from the rows' dy, x, mean and
// 1/std, and adds addend's row to it where addend is not nil.
type layerNormGradRows[T Float] struct {
	x, w, dy, addend, dx []T
	mean, rstd           []float64
}

// row sets row r of dx; in float32 with the SIMD kernels of package vec.
// The addend's row goes onto the row just stored, still in L1, as a
// separate Add would add it: one rounding of the stored value's sum.
func (k *layerNormGradRows[T]) row(r int) {
	d := len(k.w)
	xr, gr, dr := k.x[r*d:(r+1)*d], k.dy[r*d:(r+1)*d], k.dx[r*d:(r+1)*d]
	if x32, ok := any(xr).([]float32); ok {
		mt, st := float32(k.mean[r]), float32(k.rstd[r])
		g32, w32, d32 := any(gr).([]float32), any(k.w).([]float32), any(dr).([]float32)
		sg, sgx := vec.LayerNormGradSums(x32, g32, w32, mt, st)
		vec.LayerNormGradRow(d32, x32, g32, w32, mt, st, float32(float64(sg)/float64(d)), float32(float64(sgx)/float64(d)))
		if k.addend != nil {
			vec.Add(d32, d32, any(k.addend).([]float32)[r*d:(r+1)*d])
		}
		return
	}
	mt, st := T(k.mean[r]), T(k.rstd[r])
	sg, sgx := layerNormGradSums(xr, gr, k.w, mt, st)
	a, c := T(sg/float64(d)), T(sgx/float64(d))
	gr, w, dr := gr[:len(xr)], k.w[:len(xr)], dr[:len(xr)]
	for j, v := range xr {
		dr[j] = st * (gr[j]*w[j] - a - (v-mt)*st*c)
	}
	if k.addend != nil {
		for j, v := range k.addend[r*d : (r+1)*d] {
			dr[j] += v
		}
	}
}

// layerNormGradInputAndWeight sets dx row by row and sums dweight's
// partials over each worker's chunk of rows, row by row as it goes.
type layerNormGradInputAndWeight[T Float] struct {
	rows   layerNormGradRows[T]
	weight layerNormGradWeightPartials[T]
}

func (k *layerNormGradInputAndWeight[T]) Range(wlo, whi int) {
	for wk := wlo; wk < whi; wk++ {
		acc, lo, hi := k.weight.chunk(wk)
		for r := lo; r < hi; r++ {
			k.rows.row(r)
			k.weight.addRow(acc, r)
			k.weight.addBiasRow(wk, r)
		}
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

// layerNormGradWeight sets dw = Σ_rows dy·x̂: each worker's chunk of
// rows summed into its own partial sums, which are then added up. The
// partials are those the dx op summed where they are dy's, else summed
// here.
func layerNormGradWeight[T Float](x, dy, dw []T, mean, rstd []float64, partials *weightPartials) {
	d := len(dw)
	if !partials.from.take(firstOf(dy)) {
		sums := partials.start(len(mean), d)
		parallel.Loop(len(sums)/d, 1, layerNormGradWeightPartials[T]{x, dy, mean, rstd, sums, nil, d})
	}
	sums := partials.sums
	for j := range dw {
		s := 0.0
		for wk := range len(sums) / d {
			s += sums[wk*d+j]
		}
		dw[j] = T(s)
	}
}

// gradChunks is how many chunks of rows, one per worker
// (parallelWorkers), LayerNorm's backward pass sums dweight's and dbias's
// partials over, for rows rows of d features.
func gradChunks(rows, d int) int { return parallelWorkers(rows, max(1, rowsWorkGrain/d)) }

// start readies the partial sums of dweight over rows rows of d features,
// one slice of d per chunk (gradChunks): it returns them, and they are no
// dy's until the run that sums them records it.
func (p *weightPartials) start(rows, d int) []float64 {
	workers := gradChunks(rows, d)
	if cap(p.sums) < workers*d {
		p.sums = make([]float64, workers*d)
	}
	p.sums = p.sums[:workers*d]
	p.from.clear()
	return p.sums
}

// biasChunkSums sums the rows of dy, d features each, over each worker
// wk's chunk of rows (chunkRows) into bias[wk·d : (wk+1)·d], in order.
type biasChunkSums[T Float] struct {
	dy, bias []T
	rows, d  int
}

func (k *biasChunkSums[T]) Range(wlo, whi int) {
	d, workers := k.d, len(k.bias)/k.d
	for wk := wlo; wk < whi; wk++ {
		acc := k.bias[wk*d : (wk+1)*d]
		clear(acc)
		lo, hi := chunkRows(k.rows, workers, wk)
		for r := lo; r < hi; r++ {
			addTo(acc, k.dy[r*d:(r+1)*d])
		}
	}
}

// chunkRows returns the rows [lo, hi) of worker wk's chunk: rows rows in
// order, cut into workers chunks.
func chunkRows(rows, workers, wk int) (lo, hi int) {
	size := (rows + workers - 1) / workers
	return wk * size, min((wk+1)*size, rows)
}

// layerNormGradWeightPartials sums dy·x̂ over the rows of each worker
// wk's chunk into partial[wk·d : (wk+1)·d], for rows of d features, and
// where bias is not nil dy into bias[wk·d : (wk+1)·d], row after row.
type layerNormGradWeightPartials[T Float] struct {
	x, dy               []T
	mean, rstd, partial []float64
	bias                []T
	d                   int
}

func (k *layerNormGradWeightPartials[T]) Range(wlo, whi int) {
	for wk := wlo; wk < whi; wk++ {
		acc, lo, hi := k.chunk(wk)
		for r := lo; r < hi; r++ {
			k.addRow(acc, r)
			k.addBiasRow(wk, r)
		}
	}
}

// addBiasRow adds row r of dy to worker wk's partial sums of dbias, if
// there are any.
func (k *layerNormGradWeightPartials[T]) addBiasRow(wk, r int) {
	if k.bias == nil {
		return
	}
	d := k.d
	acc, gr := k.bias[wk*d:(wk+1)*d], k.dy[r*d:(r+1)*d]
	addTo(acc, gr)
}

// chunk returns worker wk's partial sums of dweight, cleared (its sums of
// dbias too), and its rows [lo, hi): the rows in order, cut into as many
// chunks as there are partial sums.
func (k *layerNormGradWeightPartials[T]) chunk(wk int) (acc []float64, lo, hi int) {
	d := k.d
	acc = k.partial[wk*d : (wk+1)*d]
	clear(acc)
	if k.bias != nil {
		clear(k.bias[wk*d : (wk+1)*d])
	}
	lo, hi = chunkRows(len(k.mean), len(k.partial)/d, wk)
	return acc, lo, hi
}

// addRow adds row r's dy·x̂ to acc.
func (k *layerNormGradWeightPartials[T]) addRow(acc []float64, r int) {
	d := len(acc)
	xr, gr := k.x[r*d:(r+1)*d], k.dy[r*d:(r+1)*d]
	if x32, ok := any(xr).([]float32); ok {
		vec.LayerNormGradWeightAcc(acc, x32, any(gr).([]float32), float32(k.mean[r]), float32(k.rstd[r]))
		return
	}
	mt, st := T(k.mean[r]), T(k.rstd[r])
	gr, acc = gr[:len(xr)], acc[:len(xr)]
	for j, v := range xr {
		acc[j] += float64(gr[j] * (v - mt) * st)
	}
}

// parallelWorkers is the number of partial sums a reduction over n items
// keeps: one per core, with at least grain items each.
func parallelWorkers(n, grain int) int {
	return max(1, min(runtime.GOMAXPROCS(0), n/max(grain, 1)))
}
