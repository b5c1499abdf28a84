package onnxexport

import (
	"fmt"

	"github.com/vit-train/vit-train/formats/onnx"
	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/model/resnet"
	"github.com/vit-train/vit-train/nn/ops"
)

// resnet wires model/resnet's evaluation graph: batch norms with their
// running statistics.
func (b *builder) resnet(net model.Network) error {
	m, err := resnet.Of(net)
	if err != nil {
		return err
	}
	channels, size := net.Spec().Input()
	l := m.Layout()
	x := b.unit(b.input(channels, size), l.Stem, true)
	if l.MaxPool {
		k, s, p := int64(resnet.MaxPoolKernel), int64(resnet.MaxPoolStride), int64(resnet.MaxPoolPad)
		x = b.node("MaxPool", "maxpool", []string{x}, onnx.IntsAttr("kernel_shape", k, k), onnx.IntsAttr("strides", s, s), onnx.IntsAttr("pads", p, p, p, p))
	}
	for i, blk := range l.Blocks {
		x = b.residual(x, blk, fmt.Sprintf("block%d", i))
	}
	x = b.node("GlobalAveragePool", "avgpool", []string{x})
	x = b.node("Flatten", "features", []string{x}, onnx.IntAttr("axis", 1))
	b.node("Gemm", Logits, []string{x, b.param("fc.weight"), b.param("fc.bias")}, onnx.IntAttr("transB", 1))
	b.output(Logits, net.Spec().NumClasses())
	return nil
}

// unit is a bias-free convolution, a batch norm in evaluation mode and,
// when relu is set, a ReLU.
func (b *builder) unit(x string, u resnet.ConvBN, relu bool) string {
	k, s, p := int64(u.Kernel), int64(u.Stride), int64(u.Pad)
	x = b.node("Conv", u.Conv, []string{x, b.param(u.Conv + ".weight")},
		onnx.IntsAttr("kernel_shape", k, k), onnx.IntsAttr("strides", s, s), onnx.IntsAttr("pads", p, p, p, p))
	x = b.node("BatchNormalization", u.BN, []string{x, b.param(u.BN + ".weight"), b.param(u.BN + ".bias"),
		b.param(u.BN + ".running_mean"), b.param(u.BN + ".running_var")}, onnx.FloatAttr("epsilon", ops.BatchNormEps))
	if !relu {
		return x
	}
	return b.node("Relu", u.BN+".relu", []string{x})
}

// residual is relu(main(x) + shortcut(x)).
func (b *builder) residual(x string, blk resnet.Block, name string) string {
	h := x
	for i, u := range blk.Units {
		h = b.unit(h, u, i < len(blk.Units)-1)
	}
	shortcut := x
	if blk.Shortcut != nil {
		shortcut = b.unit(x, *blk.Shortcut, false)
	}
	sum := b.node("Add", name+".sum", []string{h, shortcut})
	return b.node("Relu", name, []string{sum})
}
