package ops

import (
	"gorgonia.org/gorgonia"

	"github.com/vit-train/vit-train/nn/blas"
)

// convertedOutput is an op's float32 output (m, k) converted, by the op
// that makes it, into the rows that the forward product of the linear
// layer reading it takes as its A (blas.ConvertedA): each part as it is
// made, while it is in cache, so that the product does not read the
// whole output back to convert it. A ViT block's LayerNorms feed qkv and
// fc1 so, and fc1's GELU feeds fc2. The product's values are unchanged:
// it reads what it would have converted.
type convertedOutput struct {
	v    blas.Variant
	rows blas.ConvertedA
	// from is the output whose rows hold all of it, set when the
	// producing run has converted the last part and cleared when the
	// product takes them.
	from madeFrom
}

// outputConverter is an op that can convert its output for the linear
// layer that reads it.
type outputConverter interface {
	// convertOutputFor returns the op's conversion of its output for
	// products in v's arithmetic, made on the first call; nil where the
	// op already converts it for another arithmetic.
	convertOutputFor(v blas.Variant) *convertedOutput
}

// convertedInput returns the conversion of x that x's op makes for a
// linear layer with products in v, or nil where it makes none.
func convertedInput(x *gorgonia.Node, v blas.Variant) *convertedOutput {
	if p, ok := x.Op().(outputConverter); ok && !v.IsFP32() {
		return p.convertOutputFor(v)
	}
	return nil
}

// outputConversion is what an op embeds to be an outputConverter:
// converted, when a linear layer reads the op's output, is that output
// as the op converts it (nil: no such reader).
type outputConversion struct {
	converted *convertedOutput
}

// convertOutputFor implements outputConverter.
func (o *outputConversion) convertOutputFor(v blas.Variant) *convertedOutput {
	if o.converted == nil {
		o.converted = &convertedOutput{v: v}
	}
	if o.converted.v != v {
		return nil
	}
	return o.converted
}

// start begins a run that makes an output of m rows of k: it returns the
// rows to convert each part of it into, or nil where there are none (no
// reader, or products in v that do not read converted rows).
func (c *convertedOutput) start(m, k int) *blas.ConvertedA {
	if c == nil {
		return nil
	}
	c.from.clear()
	if !c.rows.Reset(c.v, m, k) {
		return nil
	}
	return &c.rows
}

// finish ends the run that makes out: conv, what start returned, now
// holds all of out converted (nil: nothing to record).
func (c *convertedOutput) finish(conv *blas.ConvertedA, out []float32) {
	if conv != nil {
		c.from.set(firstOf(out))
	}
}

// take returns the converted rows if they hold x, else nil; either way
// they are x's no longer. The caller gives them back with release.
func (c *convertedOutput) take(x []float32) *blas.ConvertedA {
	if c == nil || !c.from.take(firstOf(x)) {
		return nil
	}
	return &c.rows
}

// release gives back the rows' storage once the product has read them.
func (c *convertedOutput) release() {
	if c != nil {
		c.from.clear()
		c.rows.Release()
	}
}
