package resnet

// The stem's max pool of the ImageNet ResNets: 3×3, stride 2, padding 1.
const (
	MaxPoolKernel = 3
	MaxPoolStride = 2
	MaxPoolPad    = 1
)

// ConvBN is one unit of the network: a bias-free convolution (Conv+".weight",
// (out, in, Kernel, Kernel)) with zero padding Pad on every side, then a
// batch norm (BN+".weight", ".bias", ".running_mean", ".running_var").
type ConvBN struct {
	Conv, BN            string
	Kernel, Stride, Pad int
}

// Block is one residual block: relu(main(x) + shortcut(x)), where main
// applies Units in turn with a ReLU after all but the last, and shortcut is
// Shortcut, or the identity when Shortcut is nil.
type Block struct {
	Units    []ConvBN
	Shortcut *ConvBN
}

// Layout is the network's structure as Build wires it: Stem followed by a
// ReLU, the max pool when MaxPool is set (MaxPoolKernel, MaxPoolStride,
// MaxPoolPad), Blocks in order, a global average pool and fc (fc.weight
// (NumClasses, Features), fc.bias).
type Layout struct {
	Stem     ConvBN
	MaxPool  bool
	Blocks   []Block
	Features int
}

// Layout returns the model's structure, for exporters that rebuild the
// network in another framework.
func (m *Model) Layout() Layout {
	l := Layout{Stem: m.plan.stem.exported(), MaxPool: m.plan.maxPool, Features: m.plan.features}
	for _, b := range m.plan.blocks {
		var eb Block
		for _, u := range b.units {
			eb.Units = append(eb.Units, u.exported())
		}
		if b.down != nil {
			d := b.down.exported()
			eb.Shortcut = &d
		}
		l.Blocks = append(l.Blocks, eb)
	}
	return l
}

func (u convBN) exported() ConvBN {
	return ConvBN{Conv: u.conv, BN: u.bn, Kernel: u.kernel, Stride: u.stride, Pad: u.pad}
}
