package resnet

import (
	"fmt"

	"github.com/vit-train/vit-train/formats/onnx"
	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/nn/ops"
)

// WriteONNX writes the evaluation graph (batch norms on their running
// statistics, eps ops.BatchNormEps) as ONNX operators: the stem, the
// max-pool of a torchvision ResNet, the residual blocks, global average
// pooling and fc.
func (n *network) WriteONNX(b *onnx.Builder, images string) (model.ONNXHeads, error) {
	l := n.m.Layout()
	x := onnxUnit(b, images, l.Stem, true)
	if l.MaxPool {
		k, s, p := int64(MaxPoolKernel), int64(MaxPoolStride), int64(MaxPoolPad)
		x = b.Node("MaxPool", "maxpool", []string{x}, onnx.IntsAttr("kernel_shape", k, k), onnx.IntsAttr("strides", s, s), onnx.IntsAttr("pads", p, p, p, p))
	}
	for i, blk := range l.Blocks {
		x = onnxResidual(b, x, blk, fmt.Sprintf("block%d", i))
	}
	x = b.Node("GlobalAveragePool", "avgpool", []string{x})
	x = b.Node("Flatten", "features", []string{x}, onnx.IntAttr("axis", 1))
	return model.ONNXHeads{Logits: b.Gemm(x, "fc")}, nil
}

// onnxUnit is a bias-free convolution, a batch norm in evaluation mode
// and, when relu is set, a ReLU.
func onnxUnit(b *onnx.Builder, x string, u ConvBN, relu bool) string {
	k, s, p := int64(u.Kernel), int64(u.Stride), int64(u.Pad)
	x = b.Node("Conv", u.Conv, []string{x, b.Param(u.Conv + ".weight")},
		onnx.IntsAttr("kernel_shape", k, k), onnx.IntsAttr("strides", s, s), onnx.IntsAttr("pads", p, p, p, p))
	x = b.Node("BatchNormalization", u.BN, []string{x, b.Param(u.BN + ".weight"), b.Param(u.BN + ".bias"),
		b.Param(u.BN + ".running_mean"), b.Param(u.BN + ".running_var")}, onnx.FloatAttr("epsilon", ops.BatchNormEps))
	if !relu {
		return x
	}
	return b.Node("Relu", u.BN+".relu", []string{x})
}

// onnxResidual is relu(main(x) + shortcut(x)).
func onnxResidual(b *onnx.Builder, x string, blk Block, name string) string {
	h := x
	for i, u := range blk.Units {
		h = onnxUnit(b, h, u, i < len(blk.Units)-1)
	}
	shortcut := x
	if blk.Shortcut != nil {
		shortcut = onnxUnit(b, x, *blk.Shortcut, false)
	}
	sum := b.Node("Add", name+".sum", []string{h, shortcut})
	return b.Node("Relu", name, []string{sum})
}
