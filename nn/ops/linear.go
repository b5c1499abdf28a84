package ops

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/blas"
	"github.com/vit-train/vit-train/nn/parallel"
	"github.com/vit-train/vit-train/nn/vec"
)

// Linear returns x·Wᵀ + b, PyTorch's nn.Linear.
//
// x is (..., K); w is (N, K), or any (N, k1, k2, …) with k1·k2·… = K, such as
// a conv weight (D, C, P, P) applied to flattened patches; b is (N) or nil.
// The result is (..., N).
func Linear(x, w, b *gorgonia.Node) (*gorgonia.Node, error) { return LinearAs(blas.FP32, x, w, b) }

// LinearAs is Linear with its matrix products (the forward pass and both
// gradients) in v's arithmetic for float32 values (blas.GemmAs); float64
// values multiply in float64. The bias is added in float32; in a
// low-precision variant its gradient is summed as blas.RowSums sums, in
// runs of 32 rows, beside the weight's (blas.GemmAsSums).
func LinearAs(v blas.Variant, x, w, b *gorgonia.Node) (*gorgonia.Node, error) {
	op, args, err := newLinearOp(v, x, w, b)
	if err != nil {
		return nil, err
	}
	return gorgonia.ApplyOp(op, args...)
}

// newLinearOp checks LinearAs's operands and returns its op and arguments
// (x, w and, when b is not nil, b).
func newLinearOp(v blas.Variant, x, w, b *gorgonia.Node) (*linearOp, []*gorgonia.Node, error) {
	xs, ws := x.Shape(), w.Shape()
	if len(xs) < 1 || len(ws) < 2 {
		return nil, nil, fmt.Errorf("Linear: x %v and w %v need at least 1 and 2 dims", xs, ws)
	}
	k := xs[len(xs)-1]
	if wk := ws.TotalSize() / ws[0]; wk != k {
		return nil, nil, fmt.Errorf("Linear: x %v has %d features but w %v takes %d", xs, k, ws, wk)
	}
	op := &linearOp{xDims: len(xs), wDims: len(ws), wRows: ws[0], wCols: k, bias: b != nil, gemm: v, input: convertedInput(x, v)}
	op.base = base{name: "Linear", arity: 2, params: func(h hash.Hash) { fmt.Fprint(h, op.xDims, op.wDims, op.bias, variantKey(v)) }}
	if b == nil {
		return op, []*gorgonia.Node{x, w}, nil
	}
	if bs := b.Shape(); len(bs) != 1 || bs[0] != ws[0] {
		return nil, nil, fmt.Errorf("Linear: bias %v does not match w %v", bs, ws)
	}
	op.arity = 3
	return op, []*gorgonia.Node{x, w, b}, nil
}

type linearOp struct {
	base
	xDims, wDims int
	wRows, wCols int // W as (N, K)
	bias         bool
	gemm         blas.Variant
	// frozen, when set, keeps the weight packed across runs.
	frozen *frozenWeight
	// packs, when set, keeps the weight packed from step to step while
	// an optimizer repacks what it changes (WeightPacker).
	packs *weightPacks
	// input, when set, is x as the op that makes it converts it for the
	// forward product (see convertedOutput).
	input *convertedOutput
}

func (op *linearOp) Type() hm.Type {
	if op.bias {
		return fnType(op.xDims, op.xDims, op.wDims, 1)
	}
	return fnType(op.xDims, op.xDims, op.wDims)
}

func (op *linearOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	xs, err := shapeOf(in, 0)
	if err != nil {
		return nil, err
	}
	ws, err := shapeOf(in, 1)
	if err != nil {
		return nil, err
	}
	out := xs.Clone()
	out[len(out)-1] = ws[0]
	return out, nil
}

func (op *linearOp) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, in...)
}

func (op *linearOp) UsePreallocDo(prealloc gorgonia.Value, in ...gorgonia.Value) (gorgonia.Value, error) {
	dt, out, b, m, n, k, err := op.operands(prealloc, in)
	if err != nil {
		return nil, err
	}
	if dt == tensor.Float32 {
		linearForward[float32](op, in[0], in[1], b, out, m, n, k, nil)
	} else {
		linearForward[float64](op, in[0], in[1], b, out, m, n, k, nil)
	}
	return out, nil
}

// operands checks in's dtypes and returns them, the op's output tensor
// (prealloc when it fits), the bias (nil without one) and the product's
// sizes: x (m, k), W (n, k).
func (op *linearOp) operands(prealloc gorgonia.Value, in []gorgonia.Value) (dt tensor.Dtype, out *tensor.Dense, b gorgonia.Value, m, n, k int, err error) {
	if dt, err = checkDtypes(op.name, in...); err != nil {
		return dt, nil, nil, 0, 0, 0, err
	}
	out, m, n, k = op.result(prealloc, dt, in)
	if op.bias {
		b = in[2]
	}
	return dt, out, b, m, n, k, nil
}

// result returns the op's output tensor (prealloc when it fits) for the
// inputs in and the product's sizes: x (m, k), W (n, k).
func (op *linearOp) result(prealloc gorgonia.Value, dt tensor.Dtype, in []gorgonia.Value) (out *tensor.Dense, m, n, k int) {
	xs, ws := in[0].Shape(), in[1].Shape()
	n = ws[0]
	k = ws.TotalSize() / n
	m = xs.TotalSize() / k
	out = reuse(prealloc, dt, m*n)
	if out == nil {
		outShape := xs.Clone()
		outShape[len(outShape)-1] = n
		out = output(nil, dt, outShape)
	}
	return out, m, n, k
}

// linearForward computes op's out = x·Wᵀ (+ b): x (m, k), W (n, k), b
// (n), in op.gemm's arithmetic, with W's packed copy in op.frozen or
// op.packs when one is set, and calls then (nil: none) on blocks of out
// that tile it, once each, as their values become final
// (blas.GemmAsThen).
func linearForward[T Float](op *linearOp, x, w, b gorgonia.Value, out *tensor.Dense, m, n, k int, then blas.Then) {
	v := op.gemm
	var bias []T
	if b != nil {
		bias = floats[T](b)
	}
	if op.frozen != nil {
		linearPacked(op, floats[T](x), packedWeight(v, op.frozen, floats[T](w), n, k), bias, floats[T](out), m, n, k, then)
		return
	}
	if w32, ok := any(floats[T](w)).([]float32); ok && op.packs != nil {
		linearPacked(op, any(floats[T](x)).([]float32), op.packs.forwardB(v, w32, n, k), any(bias).([]float32), any(floats[T](out)).([]float32), m, n, k, then)
		return
	}
	blas.GemmAsThen(v, false, true, m, n, k, 1, floats[T](x), k, floats[T](w), k, 0, floats[T](out), n, bias, then)
}

// linearPacked computes op's out = x·Wᵀ (+ bias) with Wᵀ packed in wt,
// reading x's rows as the op that made x converted them where it did
// (op.input).
func linearPacked[T Float](op *linearOp, x []T, wt *blas.PackedB[T], bias, out []T, m, n, k int, then blas.Then) {
	x32, ok := any(x).([]float32)
	if !ok || op.input == nil {
		blas.GemmPackedThen(false, m, 1, x, k, wt, 0, out, n, bias, then)
		return
	}
	blas.GemmPackedConvertedThen(m, 1, x32, k, op.input.take(x32), any(wt).(*blas.PackedB[float32]), 0, any(out).([]float32), n, any(bias).([]float32), then)
	op.input.release()
}

// variantKey is what an op's hash records of its product's arithmetic:
// nothing for float32, so that float32 graphs hash as they always have.
func variantKey(v blas.Variant) string {
	if v.IsFP32() {
		return ""
	}
	return string(v)
}

func (op *linearOp) DiffWRT(inputs int) []bool {
	d := make([]bool, inputs)
	for i := range d {
		d[i] = true
	}
	return d
}

func (op *linearOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	x, w := inputs[0], inputs[1]
	dx, err := gorgonia.ApplyOp(newLinearGradInput(x.Shape(), w.Dims(), op), grad, w)
	if err != nil {
		return nil, err
	}
	var sums *biasSums
	if op.bias && !op.gemm.IsFP32() && grad.Dtype() == tensor.Float32 {
		sums = new(biasSums)
	}
	dw, err := gorgonia.ApplyOp(newLinearGradWeight(w.Shape(), x.Dims(), op.gemm, sums), grad, x)
	if err != nil {
		return nil, err
	}
	if !op.bias {
		return gorgonia.Nodes{dx, dw}, nil
	}
	db, err := biasGradient(grad, dw, sums)
	if err != nil {
		return nil, err
	}
	return gorgonia.Nodes{dx, dw, db}, nil
}

// biasGradient returns the gradient of a linear layer's bias from its
// output gradient dy: the sums that dw's op takes beside the weight
// gradient where sums carries them (products in a low-precision
// variant), else SumRows(dy).
func biasGradient(dy, dw *gorgonia.Node, sums *biasSums) (*gorgonia.Node, error) {
	if sums == nil {
		return gorgonia.ApplyOp(newSumRows(dy.Dims()), dy)
	}
	return gorgonia.ApplyOp(newLinearGradBias(dy.Dims(), dw.Dims(), sums), dy, dw)
}

// linearGradInput computes dx = dy·W: dy (..., N), W (N, K) → (..., K),
// with W packed in the forward op's packs where they are current.
type linearGradInput struct {
	base
	xShape tensor.Shape
	wDims  int
	fwd    *linearOp // its product's arithmetic (gemm) and packed weight
}

func newLinearGradInput(xShape tensor.Shape, wDims int, fwd *linearOp) *linearGradInput {
	v := fwd.gemm
	op := &linearGradInput{xShape: xShape.Clone(), wDims: wDims, fwd: fwd}
	op.base = base{name: "LinearGradInput", arity: 2, params: func(h hash.Hash) { fmt.Fprint(h, op.xShape, op.wDims, variantKey(v)) }}
	return op
}

func (op *linearGradInput) Type() hm.Type {
	return fnType(len(op.xShape), len(op.xShape), op.wDims)
}

func (op *linearGradInput) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	return op.xShape.Clone(), nil
}

func (op *linearGradInput) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, in...)
}

func (op *linearGradInput) UsePreallocDo(prealloc gorgonia.Value, in ...gorgonia.Value) (gorgonia.Value, error) {
	dt, err := checkDtypes(op.name, in...)
	if err != nil {
		return nil, err
	}
	out := output(prealloc, dt, op.xShape)
	op.product(dt, in[0], in[1], out, nil)
	return out, nil
}

// product sets out = dy·W (out (m, K) for dy (m, N), W (N, K)) and, for
// float32, calls then (nil: none) on blocks of out that tile it, once
// each, as their values become final (blas.GemmAsThen).
func (op *linearGradInput) product(dt tensor.Dtype, dy, w gorgonia.Value, out *tensor.Dense, then blas.Then) {
	n := w.Shape()[0]
	k := op.rowLen()
	m := op.xShape.TotalSize() / k
	if dt != tensor.Float32 {
		blas.Gemm(false, false, m, k, n, 1, floats[float64](dy), n, floats[float64](w), k, 0, floats[float64](out), k)
		return
	}
	if packed := op.fwd.packs.inputGradB(floats[float32](w)); packed != nil {
		blas.GemmPackedThen(false, m, 1, floats[float32](dy), n, packed, 0, floats[float32](out), k, nil, then)
		return
	}
	blas.GemmAsThen(op.fwd.gemm, false, false, m, k, n, 1, floats[float32](dy), n, floats[float32](w), k, 0, floats[float32](out), k, nil, then)
}

// rowLen is K, the length of dx's rows: x's last dim.
func (op *linearGradInput) rowLen() int { return op.xShape[len(op.xShape)-1] }

// linearGradWeight computes dW = dyᵀ·x: dy (..., N), x (..., K) → W's shape.
// With sums set (float32 only), it also sums dy's rows into them: the
// bias gradient, taken by blas.GemmAsSums in the product's pass over dy.
type linearGradWeight struct {
	base
	wShape tensor.Shape
	xDims  int
	gemm   blas.Variant
	sums   *biasSums
}

func newLinearGradWeight(wShape tensor.Shape, xDims int, v blas.Variant, sums *biasSums) *linearGradWeight {
	op := &linearGradWeight{wShape: wShape.Clone(), xDims: xDims, gemm: v, sums: sums}
	op.base = base{name: "LinearGradWeight", arity: 2, params: func(h hash.Hash) { fmt.Fprint(h, op.wShape, op.xDims, variantKey(v)) }}
	return op
}

func (op *linearGradWeight) Type() hm.Type {
	return fnType(len(op.wShape), op.xDims, op.xDims)
}

func (op *linearGradWeight) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	return op.wShape.Clone(), nil
}

func (op *linearGradWeight) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, in...)
}

func (op *linearGradWeight) UsePreallocDo(prealloc gorgonia.Value, in ...gorgonia.Value) (gorgonia.Value, error) {
	dt, err := checkDtypes("LinearGradWeight", in...)
	if err != nil {
		return nil, err
	}
	n := op.wShape[0]
	k := op.wShape.TotalSize() / n
	m := in[1].Shape().TotalSize() / k
	out := output(prealloc, dt, op.wShape)
	switch {
	case dt == tensor.Float32 && op.sums != nil:
		dy := floats[float32](in[0])
		blas.GemmAsSums(op.gemm, true, false, n, k, m, 1, dy, n, floats[float32](in[1]), k, 0, floats[float32](out), k, nil, op.sums.start(n))
		op.sums.finish(dy)
	case dt == tensor.Float32:
		blas.GemmAs(op.gemm, true, false, n, k, m, 1, floats[float32](in[0]), n, floats[float32](in[1]), k, 0, floats[float32](out), k, nil)
	default:
		blas.Gemm(true, false, n, k, m, 1, floats[float64](in[0]), n, floats[float64](in[1]), k, 0, floats[float64](out), k)
	}
	return out, nil
}

// biasSums carries a linear layer's bias gradient, the sums of the
// output gradient dy's rows (N), from the op that takes them beside the
// weight gradient (linearGradWeight) to the op that gives them out
// (linearGradBias), which runs after it.
type biasSums struct {
	sums []float32
	// from is the dy whose rows sums holds, set when the weight
	// gradient's run has taken them and cleared when they are given out.
	from madeFrom
}

// start begins a weight gradient's run: it returns the n sums to set.
func (s *biasSums) start(n int) []float32 {
	s.from.clear()
	if cap(s.sums) < n {
		s.sums = make([]float32, n)
	}
	s.sums = s.sums[:n]
	return s.sums
}

// finish records that the sums are dy's.
func (s *biasSums) finish(dy []float32) { s.from.set(firstOf(dy)) }

// take returns the sums if they are dy's, else nil; either way they are
// dy's no longer.
func (s *biasSums) take(dy []float32) []float32 {
	if !s.from.take(firstOf(dy)) {
		return nil
	}
	return s.sums
}

// linearGradBias gives out a linear layer's bias gradient, the sums of
// dy's (..., N) rows → (N), as blas.RowSums adds them up: those its
// weight gradient's op took beside dW where they are dy's (dW is an
// input so that it runs first), else summed here.
type linearGradBias struct {
	base
	inDims, wDims int
	sums          *biasSums
}

func newLinearGradBias(inDims, wDims int, sums *biasSums) *linearGradBias {
	op := &linearGradBias{inDims: inDims, wDims: wDims, sums: sums}
	op.base = base{name: "LinearGradBias", arity: 2, params: func(h hash.Hash) { fmt.Fprint(h, op.inDims, op.wDims) }}
	return op
}

func (op *linearGradBias) Type() hm.Type {
	return fnType(1, op.inDims, op.wDims)
}

func (op *linearGradBias) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapeOf(in, 0)
	if err != nil {
		return nil, err
	}
	return tensor.Shape{s[len(s)-1]}, nil
}

func (op *linearGradBias) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, in...)
}

func (op *linearGradBias) UsePreallocDo(prealloc gorgonia.Value, in ...gorgonia.Value) (gorgonia.Value, error) {
	if dt := in[0].Dtype(); dt != tensor.Float32 {
		return nil, fmt.Errorf("%s: takes float32 gradients, got %v", op.name, dt)
	}
	s := in[0].Shape()
	n := s[len(s)-1]
	dy := floats[float32](in[0])
	out := output(prealloc, tensor.Float32, tensor.Shape{n})
	if sums := op.sums.take(dy); sums != nil {
		copy(floats[float32](out), sums)
	} else {
		blas.RowSums(true, n, len(dy)/n, dy, n, floats[float32](out))
	}
	return out, nil
}

// sumRows sums a (..., N) tensor over every axis but the last → (N): the
// gradient of a broadcast bias.
type sumRows struct {
	base
	inDims int
}

func newSumRows(inDims int) *sumRows {
	op := &sumRows{inDims: inDims}
	op.base = base{name: "SumRows", arity: 1, params: func(h hash.Hash) { fmt.Fprint(h, op.inDims) }}
	return op
}

func (op *sumRows) Type() hm.Type { return fnType(1, op.inDims) }

func (op *sumRows) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapeOf(in, 0)
	if err != nil {
		return nil, err
	}
	return tensor.Shape{s[len(s)-1]}, nil
}

func (op *sumRows) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, in...)
}

func (op *sumRows) UsePreallocDo(prealloc gorgonia.Value, in ...gorgonia.Value) (gorgonia.Value, error) {
	dt, err := checkDtypes("SumRows", in...)
	if err != nil {
		return nil, err
	}
	s := in[0].Shape()
	n := s[len(s)-1]
	out := output(prealloc, dt, tensor.Shape{n})
	// Columns are independent, so any split gives the same sums. Chunks
	// are wide: each is one pass down the rows, and narrow passes read
	// them slowly (BenchmarkSumRows: on an AMD EPYC family 25 model 17,
	// 4160 rows of 192 columns summed at 14 GB/s in 8 chunks of 24, 56
	// GB/s in one).
	if dt == tensor.Float32 {
		parallel.Loop(n, sumChunk, sumColumns[float32]{floats[float32](in[0]), floats[float32](out)})
	} else {
		parallel.Loop(n, sumChunk, sumColumns[float64]{floats[float64](in[0]), floats[float64](out)})
	}
	return out, nil
}

// sumChunk is the fewest columns one worker of SumRows sums.
const sumChunk = 1024

// sumColumns sets out[j] to the sum of column j of x, whose rows have
// len(out) elements, adding the rows in order.
type sumColumns[T Float] struct{ x, out []T }

func (k *sumColumns[T]) Range(lo, hi int) {
	n := len(k.out)
	acc := k.out[lo:hi]
	clear(acc)
	for r := 0; r < len(k.x)/n; r++ {
		addTo(acc, k.x[r*n+lo:r*n+hi])
	}
}

// addTo adds x to acc element by element. For float32 it is vec.AXPY with a
// factor of 1, which rounds each sum as the scalar add does: the same
// result bit for bit, in SIMD.
func addTo[T Float](acc, x []T) {
	if x32, ok := any(x).([]float32); ok {
		vec.AXPY(any(acc).([]float32), x32, 1)
		return
	}
	for j, v := range x {
		acc[j] += v
	}
}
