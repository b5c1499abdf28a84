package ops

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/parallel"
)

// Patchify cuts images (B, C, H, W) into non-overlapping P×P patches and
// flattens them: the result is (B, (H/P)·(W/P), C·P·P), patches in row-major
// grid order and each patch's features in (c, py, px) order. Followed by
// Linear with a (D, C, P, P) weight it equals timm's PatchEmbed, a Conv2d
// with kernel and stride P.
func Patchify(x *gorgonia.Node, p int) (*gorgonia.Node, error) {
	s := x.Shape()
	if len(s) != 4 {
		return nil, fmt.Errorf("Patchify: images must be (B, C, H, W), got %v", s)
	}
	if p < 1 || s[2]%p != 0 || s[3]%p != 0 {
		return nil, fmt.Errorf("Patchify: patch size %d does not divide image %dx%d", p, s[2], s[3])
	}
	op := &patchify{p: p}
	op.base = base{name: "Patchify", arity: 1, params: func(h hash.Hash) { fmt.Fprint(h, p) }}
	return gorgonia.ApplyOp(op, x)
}

type patchify struct {
	base
	p int
}

func (op *patchify) Type() hm.Type { return fnType(3, 4) }

func (op *patchify) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapeOf(in, 0)
	if err != nil {
		return nil, err
	}
	return tensor.Shape{s[0], (s[2] / op.p) * (s[3] / op.p), s[1] * op.p * op.p}, nil
}

func (op *patchify) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, in...)
}

func (op *patchify) UsePreallocDo(prealloc gorgonia.Value, in ...gorgonia.Value) (gorgonia.Value, error) {
	dt, err := checkDtypes("Patchify", in...)
	if err != nil {
		return nil, err
	}
	s := in[0].Shape()
	out := reuse(prealloc, dt, s.TotalSize())
	if out == nil {
		out = output(nil, dt, tensor.Shape{s[0], (s[2] / op.p) * (s[3] / op.p), s[1] * op.p * op.p})
	}
	if dt == tensor.Float32 {
		patchCopy(floats[float32](in[0]), floats[float32](out), s[0], s[1], s[2], s[3], op.p, true)
	} else {
		patchCopy(floats[float64](in[0]), floats[float64](out), s[0], s[1], s[2], s[3], op.p, true)
	}
	return out, nil
}

// patchCopy moves data between images (B, C, H, W) and patches
// (B, Np, C·P·P): images → patches when toPatches, patches → images otherwise.
func patchCopy[T Float](img, patches []T, b, c, h, w, p int, toPatches bool) {
	parallel.Loop(b*(h/p)*(w/p), 16, patchRows[T]{img, patches, c, h, w, p, toPatches})
}

// patchRows is patchCopy over a range of (image, patch) pairs.
type patchRows[T Float] struct {
	img, patches []T
	c, h, w, p   int
	toPatches    bool
}

func (k *patchRows[T]) Range(lo, hi int) {
	c, h, w, p := k.c, k.h, k.w, k.p
	gw := w / p
	np := (h / p) * gw
	feat := c * p * p
	for bp := lo; bp < hi; bp++ {
		bi, pi := bp/np, bp%np
		gy, gx := pi/gw, pi%gw
		dst := k.patches[bp*feat : (bp+1)*feat]
		for ci := 0; ci < c; ci++ {
			for py := 0; py < p; py++ {
				row := k.img[((bi*c+ci)*h+gy*p+py)*w+gx*p:][:p]
				f := dst[(ci*p+py)*p:][:p]
				if k.toPatches {
					copy(f, row)
				} else {
					copy(row, f)
				}
			}
		}
	}
}

func (op *patchify) DiffWRT(int) []bool { return []bool{true} }

func (op *patchify) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	g := &unpatchify{p: op.p, shape: inputs[0].Shape()}
	g.base = base{name: "Unpatchify", arity: 1, params: func(h hash.Hash) { fmt.Fprint(h, g.p, g.shape) }}
	dx, err := gorgonia.ApplyOp(g, grad)
	return gorgonia.Nodes{dx}, err
}

// unpatchify is Patchify's inverse: (B, Np, C·P·P) → (B, C, H, W).
type unpatchify struct {
	base
	p     int
	shape tensor.Shape
}

func (op *unpatchify) Type() hm.Type { return fnType(4, 3) }

func (op *unpatchify) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	return op.shape.Clone(), nil
}

func (op *unpatchify) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, in...)
}

func (op *unpatchify) UsePreallocDo(prealloc gorgonia.Value, in ...gorgonia.Value) (gorgonia.Value, error) {
	dt, err := checkDtypes("Unpatchify", in...)
	if err != nil {
		return nil, err
	}
	s := op.shape
	out := output(prealloc, dt, s)
	if dt == tensor.Float32 {
		patchCopy(floats[float32](out), floats[float32](in[0]), s[0], s[1], s[2], s[3], op.p, false)
	} else {
		patchCopy(floats[float64](out), floats[float64](in[0]), s[0], s[1], s[2], s[3], op.p, false)
	}
	return out, nil
}
