package ops

import (
	"fmt"
	"hash"
	"math"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/internal/hugepages"
	"github.com/vit-train/vit-train/nn/blas"
	"github.com/vit-train/vit-train/nn/parallel"
	"github.com/vit-train/vit-train/nn/vec"
)

// Attention is multi-head scaled dot-product self-attention on a fused qkv
// projection, as timm's Attention after its qkv Linear:
//
//	qkv (B, N, 3D) read as (B, N, 3, H, D/H): q = qkv[:, :, 0], k = [:, :, 1], v = [:, :, 2]
//	P = softmax(q·kᵀ / √(D/H)) per head, (B, H, N, N)
//	out = P·v with heads merged back, (B, N, D)
//
// A prefix attention (NewPrefixAttentionAs) computes the rows of its
// first Q tokens only: out (B, Q, D), from P's first Q rows, (B, H, Q, N).
//
// The op keeps P for attention maps, after RecordProbs (see Probs), and
// for its backward pass where P is small (see recomputedProbsBytes);
// otherwise its backward pass computes each head's P again from q and k,
// as the forward pass made it, bit for bit, rather than reading back a
// copy of (B, H, N, N) from memory.
type Attention struct {
	base
	gemm    blas.Variant
	heads   int
	queries int // Q: the tokens whose rows the op computes; 0 for all N
	dropP   float64
	rng     *Randomness
	stream  uint64
	// Kept by the forward after RecordProbs, or for the backward pass
	// below recomputedProbsBytes, (B, H, R, N) for the R query rows it
	// computed: the softmax probabilities, their rows probRowStride(N)
	// apart. With attention dropout, the keep mask,
	// (B, H, R, N), which the backward pass reads.
	probs   []float64
	probs32 []float32
	keep    []uint8
	shape   [3]int // B, N, D of the last forward
	rows    int    // R: the query rows of the last forward
	// all holds the output of all N rows while a prefix attention records
	// P, (B, N, D).
	all   []float64
	all32 []float32
	// record says RecordProbs was called; backward, that the op has a
	// backward pass (SymDiff); kept, that the last forward kept P.
	record, backward, kept bool
	// The output converted head by head for the linear layer that reads
	// it (the projection).
	outputConversion
}

// NewAttention applies multi-head self-attention to qkv (B, N, 3D), returning
// (B, N, D) and the op, whose Probs give the attention weights of the last run.
// dropP is the attention dropout rate (timm's attn_drop) applied to the
// probabilities, with masks from r; 0 disables it and r may then be nil.
func NewAttention(qkv *gorgonia.Node, heads int, dropP float64, r *Randomness) (*gorgonia.Node, *Attention, error) {
	return NewAttentionAs(blas.FP32, qkv, heads, dropP, r)
}

// NewAttentionAs is NewAttention with its matrix products (q·kᵀ and P·v,
// and the four of the backward pass) in v's arithmetic for float32
// values (blas.GemmAs) for heads large enough to gain from it (see
// minLowPrecisionHead); the softmax and its gradient stay float32.
func NewAttentionAs(v blas.Variant, qkv *gorgonia.Node, heads int, dropP float64, r *Randomness) (*gorgonia.Node, *Attention, error) {
	return NewPrefixAttentionAs(v, qkv, heads, 0, dropP, r)
}

// NewPrefixAttentionAs is NewAttentionAs for the first queries tokens
// only: they attend to all N tokens, and the output is theirs, (B,
// queries, D), the first rows of NewAttentionAs's, as is the gradient
// their rows bring back to qkv. A network whose heads read only its
// prefix tokens ([CLS], and DeiT's distillation token) needs no more of
// its last block. queries 0 means all N.
func NewPrefixAttentionAs(v blas.Variant, qkv *gorgonia.Node, heads, queries int, dropP float64, r *Randomness) (*gorgonia.Node, *Attention, error) {
	s := qkv.Shape()
	if len(s) != 3 || s[2]%3 != 0 {
		return nil, nil, fmt.Errorf("Attention: qkv must be (B, N, 3D), got %v", s)
	}
	if queries < 0 || queries > s[1] {
		return nil, nil, fmt.Errorf("Attention: %d query tokens of %d", queries, s[1])
	}
	if heads < 1 || (s[2]/3)%heads != 0 {
		return nil, nil, fmt.Errorf("Attention: %d heads do not divide dim %d", heads, s[2]/3)
	}
	if dropP < 0 || dropP >= 1 || (dropP > 0 && r == nil) {
		return nil, nil, fmt.Errorf("Attention: dropout %g needs a rate in [0, 1) and a Randomness", dropP)
	}
	op := &Attention{gemm: v, heads: heads, queries: queries, dropP: dropP, rng: r}
	if dropP > 0 {
		op.stream = r.newStream()
	}
	id := uniqueID() // each attention owns its saved probabilities: never merge two
	op.base = base{name: "Attention", arity: 1, params: func(h hash.Hash) { fmt.Fprint(h, heads, id) }}
	out, err := gorgonia.ApplyOp(op, qkv)
	return out, op, err
}

func (op *Attention) Type() hm.Type { return fnType(3, 3) }

func (op *Attention) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapeOf(in, 0)
	if err != nil {
		return nil, err
	}
	return tensor.Shape{s[0], op.queryCount(s[1]), s[2] / 3}, nil
}

// queryCount is Q for sequences of n tokens.
func (op *Attention) queryCount(n int) int {
	if op.queries == 0 {
		return n
	}
	return op.queries
}

// RecordProbs makes the forward passes from now on keep the attention
// probabilities for Probs. A prefix attention then computes the rows of
// every token, for Probs, and outputs its prefix rows as before.
func (op *Attention) RecordProbs() { op.record = true }

// Probs returns the attention probabilities of the last forward run as a
// float64 slice of shape (B, H, N, N), with B, H and N; p is nil if that
// run did not keep them (see RecordProbs), or kept only a prefix's rows.
func (op *Attention) Probs() (p []float64, b, h, n int) {
	b, n = op.shape[0], op.shape[1]
	if !op.kept || op.rows != n {
		return nil, b, op.heads, n
	}
	ld := probRowStride(n)
	p = make([]float64, b*op.heads*n*n)
	for r := range b * op.heads * n {
		row := p[r*n : (r+1)*n]
		if op.probs32 != nil {
			for j, v := range op.probs32[r*ld : r*ld+n] {
				row[j] = float64(v)
			}
		} else {
			copy(row, op.probs[r*ld:r*ld+n])
		}
	}
	return p, b, op.heads, n
}

// recomputedProbsBytes is the size of an attention op's P, (B, H, R, N)
// rows probRowStride(N) apart, from which a training graph's forward pass
// no longer keeps it for the backward pass, which computes it again. The
// extra q·kᵀ product and softmax cost more than writing and reading back
// a small P, which saves little memory: on an AMD EPYC (family 26 model
// 2, 2 threads, bf16 products) the CIFAR preset's training step at batch
// 64 (4 MiB of P an op) spent 1.3 ms more in attention computing P again
// (op-timed, 113 and 108 ms steps), while ViT-B/16's at batch 32 (60 MiB
// an op) keeps 0.64 GiB less for 19 ms more of a 4 s step.
const recomputedProbsBytes = 16 << 20

// keepsProbs reports whether a training graph's forward pass keeps a P of
// that many bytes for the backward pass (below recomputedProbsBytes).
func keepsProbs(bytes int) bool { return bytes < recomputedProbsBytes }

// probRowStride is the distance, in elements, between the rows of a
// head's N×N scores and probabilities: N rounded up to 16, so that in
// float32 each row starts a 64-byte line (the buffers of a model's
// batch, larger than 32 KB, start on a page). Softmax runs on them in
// place, and rows that share a line with the next take it about twice as
// long (vec.SoftmaxRows); the products that read them read whole lines.
func probRowStride(n int) int { return (n + 15) / 16 * 16 }

func (op *Attention) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, in...)
}

func (op *Attention) UsePreallocDo(prealloc gorgonia.Value, in ...gorgonia.Value) (gorgonia.Value, error) {
	dt, err := checkDtypes("Attention", in...)
	if err != nil {
		return nil, err
	}
	s := in[0].Shape()
	b, n, d := s[0], s[1], s[2]/3
	q := op.queryCount(n)
	rows := q
	if op.record {
		rows = n
	}
	op.shape, op.rows = [3]int{b, n, d}, rows
	out := reuse(prealloc, dt, b*q*d)
	if out == nil {
		out = output(nil, dt, tensor.Shape{b, q, d})
	}
	size := b * op.heads * rows * probRowStride(n)
	if op.dropP > 0 {
		op.keep = grow(op.keep, b*op.heads*rows*n)
		fillKeep(op.keep, op.rng.streamKey(op.stream, op.rng.Step()), op.dropP)
	}
	op.kept = op.record || (op.backward && keepsProbs(size*int(dt.Size())))
	if dt == tensor.Float32 {
		probs := keptProbs(&op.probs32, op.kept, size)
		y := floats[float32](out)
		conv := op.converted.start(b*q, d)
		if conv != nil && ((d/op.heads)%conv.Align() != 0 || rows > q) {
			conv = nil // heads that start between words, or rows made elsewhere
		}
		if rows > q {
			op.all32 = grow(op.all32, b*n*d)
			y = op.all32
		}
		attentionForward(op.gemm, floats[float32](in[0]), y, probs, op.keep, op.dropP, b, n, rows, d, op.heads, conv)
		op.converted.finish(conv, y)
		copyPrefixRows(floats[float32](out), y, b, rows, q, d)
	} else {
		probs := keptProbs(&op.probs, op.kept, size)
		y := floats[float64](out)
		if rows > q {
			op.all = grow(op.all, b*n*d)
			y = op.all
		}
		attentionForward(op.gemm, floats[float64](in[0]), y, probs, op.keep, op.dropP, b, n, rows, d, op.heads, nil)
		copyPrefixRows(floats[float64](out), y, b, rows, q, d)
	}
	return out, nil
}

// copyPrefixRows copies the first q rows of each of b samples of all (b,
// rows, d) into out (b, q, d); nothing where all is out's own (rows = q).
func copyPrefixRows[T Float](out, all []T, b, rows, q, d int) {
	if rows == q {
		return
	}
	parallel.Loop(b, 8, tokenRows[T]{full: all, part: out, t: rows, d: d, width: q * d})
}

// keptProbs sizes the buffer a forward pass keeps P in, where it keeps
// it, and returns it (nil where it does not).
func keptProbs[T Float](probs *[]T, keep bool, size int) []T {
	if !keep {
		return nil
	}
	*probs = grow(*probs, size)
	return *probs
}

// grow returns s resized to n elements, reusing its storage when it can.
func grow[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return hugepages.Make[T](n)
}

// headViews returns head h of sample bi in a (B, N, 3D) qkv layout: the
// q, k and v columns of that head, each read with row stride 3D.
func headViews[T Float](qkv []T, bi, h, n, d, dh int) (q, k, v []T) {
	base := qkv[bi*n*3*d:]
	return base[h*dh:], base[d+h*dh:], base[2*d+h*dh:]
}

// attentionForward computes out (b, m, d), the attention of the first m
// of each sample's n tokens, from qkv (b, n, 3d), keeping P in probs
// where it is not nil.
func attentionForward[T Float](v blas.Variant, qkv, out, probs []T, keep []uint8, dropP float64, b, n, m, d, heads int, conv *blas.ConvertedA) {
	parallel.Loop(b*heads, 1, attentionHeads[T]{gemm: headVariant(v, m, n, d/heads), qkv: qkv, out: out, probs: probs, keep: keep, dropP: dropP, n: n, m: m, pm: m, ldp: probRowStride(n), d: d, heads: heads, conv: conv})
}

// minLowPrecisionHead is the fewest multiply-adds, m·n·dh, of one head's
// q·kᵀ (m query rows) for which the products of its passes run in a
// low-precision variant; smaller heads run them in float32. Each product
// of a small head is a few tiles of C over a short K, so converting and
// packing its operands, and the kernel's fixed cost per tile, outweigh
// its multiply-adds. AMX's passes, which go strip by strip
// (blas.GemmChainAs forward, blas.GemmChainGradAs backward), gain from
// heads of 64 tokens on (their products' K are then long enough for low
// precision); the other variants keep 128 tokens. On an Intel Xeon
// ("Intel(R) Xeon(R) Processor", family 6 model 167), 2 threads,
// attention's passes over heads of 64 took, in ms (medians of 3 of
// BenchmarkAttention's loops; ViT-B/16's in float32 measured before the
// backward pass went strip by strip):
//
//	tokens  samples × heads  amx fwd / bwd  float32 fwd / bwd
//	65      64 × 3           1.56 / 2.16    2.06 / 2.72
//	197     4 × 12           1.68 / 2.48    2.47 / 4.73
func minLowPrecisionHead(v blas.Variant) int {
	if v == blas.AMX {
		return 1 << 18
	}
	return 1 << 20
}

// headVariant is the variant a head of m query rows over n tokens, width
// dh, runs the products of its passes in: v, or FP32 for heads below
// minLowPrecisionHead.
func headVariant(v blas.Variant, m, n, dh int) blas.Variant {
	if m*n*dh < minLowPrecisionHead(v) {
		return blas.FP32
	}
	return v
}

// attentionHeads is the attention of the first m of n tokens, for a
// range of (sample, head) pairs bh: its operands, and the probabilities
// the forward pass keeps, pm rows a head (pm ≥ m: the forward pass's m),
// ldp apart (nil where it keeps none). out and dout are (B, m, D); dqkv
// is the backward's, and scratch holds gradBlocks blocks of a head's pm×n,
// rows ldp apart, for each of the backward's parts.
type attentionHeads[T Float] struct {
	gemm                    blas.Variant
	qkv, out, probs         []T
	dout, dqkv, scratch     []T
	keep                    []uint8
	dropP                   float64
	n, m, pm, ldp, d, heads int
	// the backward's (sample, head) pairs, and the parts it cuts them
	// into (attentionGradParts)
	pairs, parts int
	// conv, if set, takes each head's (float32) output as the forward
	// pass makes it (see convertedOutput).
	conv *blas.ConvertedA
}

// head returns head bh's pm×n block of buf (probs or scratch), its rows
// ldp apart.
func (k *attentionHeads[T]) head(buf []T, bh int) []T {
	return buf[bh*k.pm*k.ldp : (bh+1)*k.pm*k.ldp]
}

// dropRows sets dst = src·keep/(1 − p) for rows [r0, r1) of head bh
// (dst, src from row r0 on, ldp apart; the keep mask n apart).
func (k *attentionHeads[T]) dropRows(dst, src []T, bh, r0, r1 int, inv T) {
	n, ldp := k.n, k.ldp
	keep := k.keep[bh*k.pm*n : (bh+1)*k.pm*n]
	for r := r0; r < r1; r++ {
		i := (r - r0) * ldp
		for j, m := range keep[r*n : (r+1)*n] {
			dst[i+j] = src[i+j] * T(m) * inv
		}
	}
}

// constants returns the head width, the score scale 1/√dh and the
// dropout's 1/(1 − p).
func (k *attentionHeads[T]) constants() (dh int, scale, inv T) {
	dh = k.d / k.heads
	return dh, T(1 / math.Sqrt(float64(dh))), T(1 / (1 - k.dropP))
}

func (k *attentionHeads[T]) Range(lo, hi int) {
	n, m, ldp, d, heads := k.n, k.m, k.ldp, k.d, k.heads
	dh, scale, inv := k.constants()
	for bh := lo; bh < hi; bh++ {
		bi, h := bh/heads, bh%heads
		q, kk, v := headViews(k.qkv, bi, h, n, d, dh)
		probs := func(r0, r1 int, s []T) ([]T, int) { return k.probRows(bh, r0, r1, s, inv), ldp }
		blas.GemmChainAs(k.gemm, m, n, dh, scale, q, 3*d, kk, 3*d, ldp, probs, dh, v, 3*d, k.out[bi*m*d+h*dh:], d)
		if k.conv != nil {
			k.conv.Convert(any(k.out).([]float32), d, bi*m, (bi+1)*m, h*dh, (h+1)*dh)
		}
	}
}

// probRows makes rows [r0, r1) of head bh's P = softmax(scale·q·kᵀ) in
// place over those of its scores s (row r0 first, ldp apart), serially
// (this loop is already spread over the cores), copies them to probs
// where the op keeps P, and with attention dropout drops them out in
// place: s then holds what multiplies v. The kept copy of a float32 P is
// written with streaming stores: it is read after the forward pass.
func (k *attentionHeads[T]) probRows(bh, r0, r1 int, s []T, inv T) []T {
	n, ldp := k.n, k.ldp
	softmaxEachRow(s, s, r1-r0, n, ldp)
	if k.probs != nil {
		keepRows(k.head(k.probs, bh)[r0*ldp:], s, r1-r0, n, ldp)
	}
	if k.dropP > 0 {
		k.dropRows(s, s, bh, r0, r1, inv)
	}
	return s
}

// keepRows copies rows rows of n values (ldp apart) from p to kept, a
// float32 kept copy with streaming stores.
func keepRows[T Float](kept, p []T, rows, n, ldp int) {
	k32, ok := any(kept).([]float32)
	if !ok {
		for r := range rows {
			copy(kept[r*ldp:r*ldp+n], p[r*ldp:r*ldp+n])
		}
		return
	}
	p32 := any(p).([]float32)
	for r := range rows {
		vec.CopyStreaming(k32[r*ldp:r*ldp+n], p32[r*ldp:r*ldp+n])
	}
	vec.StoreFence()
}

func (op *Attention) DiffWRT(int) []bool { return []bool{true} }

func (op *Attention) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	op.backward = true
	g := &attentionGrad{fwd: op}
	g.base = base{name: "AttentionGrad", arity: 2, params: func(h hash.Hash) { fmt.Fprintf(h, "%p", op) }}
	dqkv, err := gorgonia.ApplyOp(g, inputs[0], grad)
	return gorgonia.Nodes{dqkv}, err
}

// attentionGrad maps (qkv (B, N, 3D), dout (B, N, D)) to dqkv (B, N, 3D),
// reading each head's probabilities where its forward op kept them and
// otherwise computing them again as the forward op made them.
type attentionGrad struct {
	base
	fwd       *Attention
	scratch   []float64
	scratch32 []float32
}

func (op *attentionGrad) Type() hm.Type { return fnType(3, 3, 3) }

func (op *attentionGrad) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	return shapeOf(in, 0)
}

func (op *attentionGrad) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, in...)
}

func (op *attentionGrad) UsePreallocDo(prealloc gorgonia.Value, in ...gorgonia.Value) (gorgonia.Value, error) {
	dt, err := checkDtypes("AttentionGrad", in...)
	if err != nil {
		return nil, err
	}
	s := in[0].Shape()
	b, n, d := s[0], s[1], s[2]/3
	f := op.fwd
	heads, m, pm := f.heads, f.queryCount(n), f.rows
	out := output(prealloc, dt, s)
	if dt == tensor.Float32 {
		probs := keptBy(f.probs32, f.kept)
		op.scratch32 = grow(op.scratch32, attentionGradScratch(b*heads, pm, n, probs == nil, f.dropP))
		attentionBackward(f.gemm, floats[float32](in[0]), floats[float32](in[1]), floats[float32](out), probs, op.scratch32, f.keep, f.dropP, b, n, m, pm, d, heads)
	} else {
		probs := keptBy(f.probs, f.kept)
		op.scratch = grow(op.scratch, attentionGradScratch(b*heads, pm, n, probs == nil, f.dropP))
		attentionBackward(f.gemm, floats[float64](in[0]), floats[float64](in[1]), floats[float64](out), probs, op.scratch, f.keep, f.dropP, b, n, m, pm, d, heads)
	}
	return out, nil
}

// keptBy is probs where the forward pass kept them, nil otherwise.
func keptBy[T Float](probs []T, kept bool) []T {
	if !kept {
		return nil
	}
	return probs
}

// attentionBackward computes dqkv (b, n, 3d) from dout (b, m, d), the
// gradient of the first m tokens' attention, and the probabilities the
// forward pass kept, pm rows a head, or where probs is nil (pm = m) the
// probabilities computed again. scratch holds at least
// attentionGradScratch's elements.
func attentionBackward[T Float](v blas.Variant, qkv, dout, dqkv, probs, scratch []T, keep []uint8, dropP float64, b, n, m, pm, d, heads int) {
	parts := attentionGradParts(b * heads)
	parallel.Loop(parts, 1, attentionHeadsGrad[T]{gemm: headVariant(v, m, n, d/heads), qkv: qkv, dout: dout, dqkv: dqkv, probs: probs, scratch: scratch, keep: keep, dropP: dropP, n: n, m: m, pm: pm, ldp: probRowStride(n), d: d, heads: heads, pairs: b * heads, parts: parts})
}

// attentionGradScratch is the scratch attentionBackward needs for count
// (sample, head) pairs of pm rows over n tokens: for each of its parts, a
// block for dS, one for P where it computes P again, and one for P after
// dropout where dropP is not 0.
func attentionGradScratch(count, pm, n int, recompute bool, dropP float64) int {
	return attentionGradParts(count) * gradBlocks(recompute, dropP) * pm * probRowStride(n)
}

// gradBlocks is how many pm×ldp blocks of scratch a part of attention's
// backward pass takes (see attentionGradScratch).
func gradBlocks(recompute bool, dropP float64) int {
	blocks := 1
	if recompute {
		blocks++
	}
	if dropP > 0 {
		blocks++
	}
	return blocks
}

// attentionGradParts is how many parts attention's backward pass cuts
// its count (sample, head) pairs into: as many as parallel.For cuts a
// loop of them into. Each part takes its pairs in turn and makes their
// dS, one head's at a time, in a block of scratch of its own, which
// stays in cache from one pair to the next.
func attentionGradParts(count int) int {
	return parallel.Chunks(count, 1)
}

// attentionHeadsGrad is the backward pass of attentionHeads, over parts.
type attentionHeadsGrad[T Float] attentionHeads[T]

func (g *attentionHeadsGrad[T]) Range(lo, hi int) {
	for part := lo; part < hi; part++ {
		g.part(part)
	}
}

// part computes the gradients of the part's (sample, head) pairs.
func (g *attentionHeadsGrad[T]) part(part int) {
	k := (*attentionHeads[T])(g)
	n, m, ldp, d, heads := k.n, k.m, k.ldp, k.d, k.heads
	dh, scale, inv := k.constants()
	ds := k.partBlock(part, 0)
	for bh := part * k.pairs / k.parts; bh < (part+1)*k.pairs/k.parts; bh++ {
		bi, h := bh/heads, bh%heads
		q, kk, v := headViews(k.qkv, bi, h, n, d, dh)
		dq, dk, dv := headViews(k.dqkv, bi, h, n, d, dh)
		p := k.headProbs(bh, part, q, kk, scale)
		// dV = P̃ᵀ·dO and dP̃ = dO·Vᵀ, where P̃ is P after dropout; dS
		// from dP̃ (softmaxRowsGrad); dQ = scale·dS·K, dK = scale·dSᵀ·Q.
		pv := p
		if k.dropP > 0 {
			pv = k.partBlock(part, gradBlocks(k.probs == nil, k.dropP)-1)
			k.dropRows(pv, p, bh, 0, m, inv)
		}
		grad := func(r0, r1 int, rows []T) { k.softmaxRowsGrad(bh, r0, r1, p, rows, inv) }
		blas.GemmChainGradAs(k.gemm, &blas.ChainGrad[T]{M: m, N: n, K: dh, E: dh, Alpha: scale,
			A: q, LDA: 3 * d, B: kk, LDB: 3 * d, P: pv, LDP: ldp, D: v, LDD: 3 * d, DC: k.dout[bi*m*d+h*dh:], LDDC: d,
			DS: ds, LDS: ldp, DA: dq, LDDA: 3 * d, DB: dk, LDDB: 3 * d, DD: dv, LDDD: 3 * d}, grad)
		// The rows of q past the m that attend have no gradient.
		for r := m; r < n; r++ {
			clear(dq[r*3*d : r*3*d+dh])
		}
	}
}

// partBlock returns block i of the backward's part's blocks of scratch
// (gradBlocks of them: dS, then P where it is computed again, then P after
// dropout where there is dropout).
func (k *attentionHeads[T]) partBlock(part, i int) []T {
	return k.head(k.scratch, part*gradBlocks(k.probs == nil, k.dropP)+i)
}

// headProbs returns head bh's P, rows ldp apart: the copy the forward
// pass kept, or else its first m rows computed again, in the backward's
// part's block 1, from the head's q and k as the forward pass made them,
// bit for bit (its chain's values are GemmAs's, see blas.GemmChainAs).
func (k *attentionHeads[T]) headProbs(bh, part int, q, kk []T, scale T) []T {
	if k.probs != nil {
		return k.head(k.probs, bh)
	}
	m, n, ldp, d := k.m, k.n, k.ldp, k.d
	p := k.partBlock(part, 1)
	blas.GemmAs(k.gemm, false, true, m, n, d/k.heads, scale, q, 3*d, kk, 3*d, 0, p, ldp, nil)
	softmaxEachRow(p, p, m, n, ldp)
	return p
}

// softmaxRowsGrad makes rows [r0, r1) of head bh's dS = P ⊙ (dP − Σ_j
// dP⊙P) in place in ds (row r0 first, ldp apart) from those of dP̃, the
// gradient of the probabilities after dropout, and P's rows p (row 0
// first).
func (k *attentionHeads[T]) softmaxRowsGrad(bh, r0, r1 int, p, ds []T, inv T) {
	ldp, n := k.ldp, k.n
	if k.dropP > 0 {
		k.dropRows(ds, ds, bh, r0, r1, inv)
	}
	for r := r0; r < r1; r++ {
		pr, dr := p[r*ldp:r*ldp+n], ds[(r-r0)*ldp:(r-r0)*ldp+n]
		if p32, ok := any(pr).([]float32); ok {
			d32 := any(dr).([]float32)
			vec.MulDiff(d32, p32, d32, vec.Dot(p32, d32))
			continue
		}
		var dot T
		for j, pv := range pr {
			dot += pv * dr[j]
		}
		for j, pv := range pr {
			dr[j] = pv * (dr[j] - dot)
		}
	}
}
