package ops

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/parallel"
)

// EmbedTokens builds the encoder's input sequence: the prefix tokens (the
// [CLS] token, then the distillation token for DeiT), each (1, 1, D) and
// shared by the batch, followed by the patch tokens (B, Np, D); the position
// embeddings pos (1, T, D), T = len(prefix) + Np, are added to all of them.
// The result is (B, T, D).
func EmbedTokens(patches, pos *gorgonia.Node, prefix ...*gorgonia.Node) (*gorgonia.Node, error) {
	ps, pos3 := patches.Shape(), pos.Shape()
	if len(ps) != 3 {
		return nil, fmt.Errorf("EmbedTokens: patches must be (B, Np, D), got %v", ps)
	}
	t := len(prefix) + ps[1]
	if !pos3.Eq(tensor.Shape{1, t, ps[2]}) {
		return nil, fmt.Errorf("EmbedTokens: pos_embed %v, want (1, %d, %d)", pos3, t, ps[2])
	}
	for i, p := range prefix {
		if !p.Shape().Eq(tensor.Shape{1, 1, ps[2]}) {
			return nil, fmt.Errorf("EmbedTokens: prefix token %d is %v, want (1, 1, %d)", i, p.Shape(), ps[2])
		}
	}
	op := &embedTokens{prefix: len(prefix)}
	op.base = base{name: "EmbedTokens", arity: 2 + len(prefix), params: func(h hash.Hash) { fmt.Fprint(h, op.prefix) }}
	return gorgonia.ApplyOp(op, append([]*gorgonia.Node{patches, pos}, prefix...)...)
}

type embedTokens struct {
	base
	prefix int
}

func (op *embedTokens) Type() hm.Type {
	in := make([]int, op.arity)
	for i := range in {
		in[i] = 3
	}
	return fnType(3, in...)
}

func (op *embedTokens) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapeOf(in, 0)
	if err != nil {
		return nil, err
	}
	return tensor.Shape{s[0], s[1] + op.prefix, s[2]}, nil
}

func (op *embedTokens) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, in...)
}

func (op *embedTokens) UsePreallocDo(prealloc gorgonia.Value, in ...gorgonia.Value) (gorgonia.Value, error) {
	dt, err := checkDtypes("EmbedTokens", in...)
	if err != nil {
		return nil, err
	}
	s := in[0].Shape()
	out := reuse(prealloc, dt, s[0]*(s[1]+op.prefix)*s[2])
	if out == nil {
		out = output(nil, dt, tensor.Shape{s[0], s[1] + op.prefix, s[2]})
	}
	if dt == tensor.Float32 {
		embedTokensKernel[float32](in, out, op.prefix)
	} else {
		embedTokensKernel[float64](in, out, op.prefix)
	}
	return out, nil
}

func embedTokensKernel[T Float](in []gorgonia.Value, out *tensor.Dense, prefix int) {
	s := in[0].Shape()
	b, np, d := s[0], s[1], s[2]
	parallel.Loop(b, 1, embedRows[T]{in, floats[T](in[0]), floats[T](in[1]), floats[T](out), prefix, np, d})
}

// embedRows writes a range of images' token rows: each prefix token
// in[2+i] plus its position embedding, then the image's patches plus
// theirs.
type embedRows[T Float] struct {
	in              []gorgonia.Value
	patches, pos, y []T
	prefix, np, d   int
}

func (k *embedRows[T]) Range(lo, hi int) {
	prefix, np, d := k.prefix, k.np, k.d
	t := np + prefix
	for bi := lo; bi < hi; bi++ {
		for i := 0; i < prefix; i++ {
			tok, p, dst := floats[T](k.in[2+i]), k.pos[i*d:(i+1)*d], k.y[(bi*t+i)*d:][:d]
			for j := range dst {
				dst[j] = tok[j] + p[j]
			}
		}
		src, p, dst := k.patches[bi*np*d:(bi+1)*np*d], k.pos[prefix*d:], k.y[(bi*t+prefix)*d:(bi+1)*t*d]
		for j := range dst {
			dst[j] = src[j] + p[j]
		}
	}
}

func (op *embedTokens) DiffWRT(inputs int) []bool {
	d := make([]bool, inputs)
	for i := range d {
		d[i] = true
	}
	return d
}

func (op *embedTokens) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	t := output.Shape()[1]
	dPatches, err := tokenRange(grad, op.prefix, t, false, false)
	if err != nil {
		return nil, err
	}
	dPos, err := tokenRange(grad, 0, t, true, false)
	if err != nil {
		return nil, err
	}
	grads := gorgonia.Nodes{dPatches, dPos}
	for i := 0; i < op.prefix; i++ {
		dTok, err := tokenRange(grad, i, i+1, true, false)
		if err != nil {
			return nil, err
		}
		grads = append(grads, dTok)
	}
	return grads, nil
}

// SelectToken picks token i of every sequence: x (B, T, D) → (B, D), the
// input of the classification heads.
func SelectToken(x *gorgonia.Node, i int) (*gorgonia.Node, error) {
	s := x.Shape()
	if len(s) != 3 || i < 0 || i >= s[1] {
		return nil, fmt.Errorf("SelectToken: token %d of %v", i, s)
	}
	return tokenRange(x, i, i+1, false, true)
}

// Tokens takes tokens [from, to) of every sequence: x (B, T, D) → (B,
// to−from, D), such as the prefix tokens that a ViT's heads read.
func Tokens(x *gorgonia.Node, from, to int) (*gorgonia.Node, error) {
	s := x.Shape()
	if len(s) != 3 || from < 0 || from >= to || to > s[1] {
		return nil, fmt.Errorf("Tokens: tokens [%d, %d) of %v", from, to, s)
	}
	return tokenRange(x, from, to, false, false)
}

// tokenRange takes tokens [from, to) of x (B, T, D): (B, to−from, D); with
// sumBatch the batch is summed, (1, to−from, D); with squeeze (one token, no
// sum) the token axis is dropped, (B, D).
func tokenRange(x *gorgonia.Node, from, to int, sumBatch, squeeze bool) (*gorgonia.Node, error) {
	op := &tokenRangeOp{from: from, to: to, sumBatch: sumBatch, squeeze: squeeze, inShape: x.Shape()}
	op.base = base{name: "TokenRange", arity: 1, params: func(h hash.Hash) { fmt.Fprint(h, from, to, sumBatch, squeeze) }}
	return gorgonia.ApplyOp(op, x)
}

type tokenRangeOp struct {
	base
	from, to          int
	sumBatch, squeeze bool
	inShape           tensor.Shape
}

func (op *tokenRangeOp) outShape() tensor.Shape {
	b, d := op.inShape[0], op.inShape[2]
	switch {
	case op.squeeze:
		return tensor.Shape{b, d}
	case op.sumBatch:
		return tensor.Shape{1, op.to - op.from, d}
	}
	return tensor.Shape{b, op.to - op.from, d}
}

func (op *tokenRangeOp) outSize() int {
	n := op.inShape[2] * (op.to - op.from)
	if !op.sumBatch {
		n *= op.inShape[0]
	}
	return n
}

func (op *tokenRangeOp) Type() hm.Type { return fnType(len(op.outShape()), 3) }

func (op *tokenRangeOp) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	return op.outShape(), nil
}

func (op *tokenRangeOp) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, in...)
}

func (op *tokenRangeOp) UsePreallocDo(prealloc gorgonia.Value, in ...gorgonia.Value) (gorgonia.Value, error) {
	dt, err := checkDtypes("TokenRange", in...)
	if err != nil {
		return nil, err
	}
	out := reuse(prealloc, dt, op.outSize())
	if out == nil {
		out = output(nil, dt, op.outShape())
	}
	if dt == tensor.Float32 {
		tokenRangeKernel(floats[float32](in[0]), floats[float32](out), op)
	} else {
		tokenRangeKernel(floats[float64](in[0]), floats[float64](out), op)
	}
	return out, nil
}

func tokenRangeKernel[T Float](x, y []T, op *tokenRangeOp) {
	b, t, d := op.inShape[0], op.inShape[1], op.inShape[2]
	rows := tokenRows[T]{full: x, part: y, t: t, d: d, from: op.from, width: (op.to - op.from) * d}
	if !op.sumBatch {
		parallel.Loop(b, 8, rows)
		return
	}
	parallel.Loop(rows.width, 1024, tokenBatchSum[T](rows))
}

// tokenRows copies tokens [from, from + width/d) of a range of images of
// full (B, t, d) into part (B, width/d, d) or, when scatter, back into
// full's rows, zeroing the rest.
type tokenRows[T Float] struct {
	full, part        []T
	t, d, from, width int
	scatter           bool
}

func (k *tokenRows[T]) Range(lo, hi int) {
	for bi := lo; bi < hi; bi++ {
		row, part := k.full[bi*k.t*k.d:(bi+1)*k.t*k.d], k.part[bi*k.width:(bi+1)*k.width]
		if k.scatter {
			clear(row)
			copy(row[k.from*k.d:], part)
		} else {
			copy(part, row[k.from*k.d:])
		}
	}
}

// tokenBatchSum sums the tokens tokenRows would copy over the batch: part
// (width/d, d) over a range of its elements.
type tokenBatchSum[T Float] tokenRows[T]

func (k *tokenBatchSum[T]) Range(lo, hi int) {
	acc := k.part[lo:hi]
	clear(acc)
	for bi := 0; bi < len(k.full)/(k.t*k.d); bi++ {
		src := k.full[(bi*k.t+k.from)*k.d+lo:][:hi-lo]
		for j, v := range src {
			acc[j] += v
		}
	}
}

func (op *tokenRangeOp) DiffWRT(int) []bool { return []bool{!op.sumBatch} }

func (op *tokenRangeOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if op.sumBatch {
		return nil, fmt.Errorf("TokenRange: batch sums are not differentiated")
	}
	g := &tokenScatter{from: op.from, to: op.to, shape: op.inShape.Clone(), gradDims: grad.Dims()}
	g.base = base{name: "TokenScatter", arity: 1, params: func(h hash.Hash) { fmt.Fprint(h, g.from, g.to, g.shape, g.gradDims) }}
	dx, err := gorgonia.ApplyOp(g, grad)
	return gorgonia.Nodes{dx}, err
}

// tokenScatter writes a gradient of tokens [from, to) into zeros of shape (B, T, D).
type tokenScatter struct {
	base
	from, to int
	shape    tensor.Shape
	gradDims int
}

func (op *tokenScatter) Type() hm.Type { return fnType(3, op.gradDims) }

func (op *tokenScatter) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	return op.shape.Clone(), nil
}

func (op *tokenScatter) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, in...)
}

func (op *tokenScatter) UsePreallocDo(prealloc gorgonia.Value, in ...gorgonia.Value) (gorgonia.Value, error) {
	dt, err := checkDtypes("TokenScatter", in...)
	if err != nil {
		return nil, err
	}
	out := output(prealloc, dt, op.shape)
	if dt == tensor.Float32 {
		tokenScatterKernel(floats[float32](in[0]), floats[float32](out), op)
	} else {
		tokenScatterKernel(floats[float64](in[0]), floats[float64](out), op)
	}
	return out, nil
}

func tokenScatterKernel[T Float](g, y []T, op *tokenScatter) {
	b, t, d := op.shape[0], op.shape[1], op.shape[2]
	parallel.Loop(b, 8, tokenRows[T]{full: y, part: g, t: t, d: d, from: op.from, width: (op.to - op.from) * d, scatter: true})
}
