package ops

import (
	"reflect"
	"sync"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// NativeOp returns an op of this package that computes n's value from its
// inputs in (n's children, in argument order) as n's own Gorgonia op does,
// bit for bit, without allocating, or false when there is none. It covers
// the op gorgonia.Grad inserts wherever a value is read more than once:
// Gorgonia's elementwise Add of two tensors of n's shape, which sums the
// value's gradients. Gorgonia's Add allocates on every call; a runner
// substitutes the returned op for it (runner.Program.Substitute).
func NativeOp(n *gorgonia.Node, in []*gorgonia.Node) (gorgonia.UsePreallocDoer, bool) {
	if !isGradientSum(n, in) {
		return nil, false
	}
	return newAdd(n.Dims()), true
}

// MergeSum is a runner.Merge for the sums NativeOp takes: where the term
// is LayerNorm's input gradient, it gives the op that computes that
// gradient with the other term added to each row as the row is stored,
// the same sums bit for bit without writing the term and reading it
// back. A ViT block's input is read by its first LayerNorm and by the
// residual connection, so its gradient is such a sum.
func MergeSum(sum *gorgonia.Node, in []*gorgonia.Node, term int) (gorgonia.UsePreallocDoer, bool) {
	if !isGradientSum(sum, in) {
		return nil, false
	}
	if g, ok := in[term].Op().(*layerNormGrad); ok && !g.weight {
		return newLayerNormGradPlus(g), true
	}
	return nil, false
}

// isGradientSum reports whether n, with inputs in, is Gorgonia's
// elementwise Add of two float tensors of n's shape.
func isGradientSum(n *gorgonia.Node, in []*gorgonia.Node) bool {
	if !isGorgoniaAdd(n.Op()) || n.IsScalar() || len(in) != 2 {
		return false
	}
	if dt := n.Dtype(); dt != tensor.Float32 && dt != tensor.Float64 {
		return false
	}
	for _, c := range in {
		if c.IsScalar() || !c.Shape().Eq(n.Shape()) || c.Dtype() != n.Dtype() {
			return false
		}
	}
	return true
}

// gorgoniaAdd is the op of gorgonia.Add on two tensors, the reference
// isGorgoniaAdd compares with.
var gorgoniaAdd = sync.OnceValue(func() gorgonia.Op {
	g := gorgonia.NewGraph()
	a := gorgonia.NewVector(g, tensor.Float32, gorgonia.WithShape(2), gorgonia.WithName("a"))
	b := gorgonia.NewVector(g, tensor.Float32, gorgonia.WithShape(2), gorgonia.WithName("b"))
	sum, err := gorgonia.Add(a, b)
	if err != nil {
		panic(err)
	}
	return sum.Op()
})

// isGorgoniaAdd reports whether op is Gorgonia's elementwise addition.
func isGorgoniaAdd(op gorgonia.Op) bool {
	ref := gorgoniaAdd()
	return op != nil && reflect.TypeOf(op) == reflect.TypeOf(ref) && op.String() == ref.String()
}
