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
	if !isGorgoniaAdd(n.Op()) || n.IsScalar() || len(in) != 2 {
		return nil, false
	}
	if dt := n.Dtype(); dt != tensor.Float32 && dt != tensor.Float64 {
		return nil, false
	}
	for _, c := range in {
		if c.IsScalar() || !c.Shape().Eq(n.Shape()) || c.Dtype() != n.Dtype() {
			return nil, false
		}
	}
	return newAdd(n.Dims()), true
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
