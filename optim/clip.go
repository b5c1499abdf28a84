package optim

import (
	"fmt"
	"math"

	"github.com/vit-train/vit-train/nn/vec"
)

// clipEps is added to the norm before dividing, as in
// torch.nn.utils.clip_grad_norm_.
const clipEps = 1e-6

// ClipCoef returns the factor torch.nn.utils.clip_grad_norm_ multiplies
// the gradients by: maxNorm/(norm+1e-6), clamped to at most 1.
func ClipCoef(norm, maxNorm float64) float64 {
	return min(maxNorm/(norm+clipEps), 1)
}

// Clipper computes the global L2 norm of a set of gradients and rescales
// them so that it is at most a maximum, like
// torch.nn.utils.clip_grad_norm_ (timm's --clip-grad with clip mode
// "norm"). The norm is accumulated in float64 in a fixed order, so it does
// not depend on the number of cores.
type Clipper struct {
	params  []Param
	part    partition
	partial []float64 // sum of squares per work unit
	normJob job
	mulJob  job

	// Per-call values read by the work units.
	grads [][]float32
	scale float32
}

// NewClipper builds a clipper for gradients shaped like params.
func NewClipper(params []Param) (*Clipper, error) {
	if err := checkParams(params); err != nil {
		return nil, err
	}
	c := &Clipper{params: cloneParams(params), part: newPartition(sizes(params))}
	c.partial = make([]float64, c.part.units())
	c.normJob = job{fn: c.sumSquaresGroup, n: (c.part.units() + 3) / 4}
	c.mulJob = job{fn: c.scaleUnit, n: c.part.units()}
	return c, nil
}

// Norm returns the L2 norm of all gradients together.
func (c *Clipper) Norm(grads [][]float32) (float64, error) {
	if err := checkGrads(c.params, grads); err != nil {
		return 0, err
	}
	c.grads = grads
	c.normJob.run()
	c.grads = nil
	sum := 0.0
	for _, s := range c.partial {
		sum += s
	}
	return math.Sqrt(sum), nil
}

// Clip scales grads in place by ClipCoef(norm, maxNorm) and returns the norm
// before clipping. A maxNorm ≤ 0 only measures the norm. As in PyTorch, a
// non-finite norm is not an error: the gradients become NaN or zero.
func (c *Clipper) Clip(grads [][]float32, maxNorm float64) (float64, error) {
	norm, scale, err := c.NormScale(grads, maxNorm)
	if err == nil && scale != 1 {
		c.grads, c.scale = grads, scale
		c.mulJob.run()
		c.grads = nil
	}
	return norm, err
}

// NormScale returns the global L2 norm of grads and the factor Clip would
// scale them by, float32(ClipCoef(norm, maxNorm)), or 1 where Clip leaves
// them alone (maxNorm ≤ 0, or a coefficient of 1 or more). It does not
// change grads: an optimizer's StepScaled applies the factor as it reads
// them.
func (c *Clipper) NormScale(grads [][]float32, maxNorm float64) (norm float64, scale float32, err error) {
	if norm, err = c.Norm(grads); err != nil || maxNorm <= 0 {
		return norm, 1, err
	}
	if math.IsNaN(maxNorm) {
		return norm, 1, fmt.Errorf("optim: max gradient norm is NaN")
	}
	if coef := ClipCoef(norm, maxNorm); !(coef >= 1) {
		return norm, float32(coef), nil
	}
	return norm, 1, nil
}

// sumSquaresGroup sets the partial sums of units [4q, 4q+4): four units
// that are each one span of the same length, as the units of a large
// tensor are, together (vec.SumSquares64x4), other units one at a time.
// Either way a unit's partial sum has the same bits.
func (c *Clipper) sumSquaresGroup(q int) {
	u0, u1 := 4*q, min(4*q+4, c.part.units())
	if x, ok := c.equalSpans(u0, u1); ok {
		s := vec.SumSquares64x4(x[0], x[1], x[2], x[3])
		copy(c.partial[u0:u1], s[:])
		return
	}
	for u := u0; u < u1; u++ {
		c.sumSquaresUnit(u)
	}
}

// equalSpans returns the gradients of units [u0, u1) when they are four
// units of one span each, all of one length.
func (c *Clipper) equalSpans(u0, u1 int) (x [4][]float32, ok bool) {
	if u1-u0 != 4 {
		return x, false
	}
	for i := range x {
		spans := c.part.unit(u0 + i)
		if len(spans) != 1 {
			return x, false
		}
		s := spans[0]
		x[i] = c.grads[s.t][s.lo:s.hi]
		if len(x[i]) != len(x[0]) {
			return x, false
		}
	}
	return x, true
}

func (c *Clipper) sumSquaresUnit(u int) {
	sum := 0.0
	for _, s := range c.part.unit(u) {
		sum += sumSquares(c.grads[s.t][s.lo:s.hi])
	}
	c.partial[u] = sum
}

func (c *Clipper) scaleUnit(u int) {
	for _, s := range c.part.unit(u) {
		g := c.grads[s.t][s.lo:s.hi]
		for i := range g {
			g[i] *= c.scale
		}
	}
}

// sumSquares returns Σ x² in float64 with four running sums, in a fixed
// order (vec.SumSquares64).
func sumSquares(x []float32) float64 { return vec.SumSquares64(x) }
