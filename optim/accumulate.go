package optim

import (
	"fmt"
	"math"
)

// Accumulator sums the gradients of several micro-batches into buffers it
// owns and averages them, for gradient accumulation: with Add(g_k, w_k) for
// micro-batches k = 1..K, Mean returns Σ w_k·g_k / Σ w_k. When each g_k is
// the gradient of a mean loss over n_k samples, w_k = n_k gives the gradient
// of the mean loss over the whole batch. The buffers are reused from one
// optimizer step to the next.
type Accumulator struct {
	params   []Param
	sums     [][]float32
	weight   float64
	count    int
	averaged bool
	part     partition
	addJob   job
	mulJob   job

	// Per-call values read by the work units.
	grads [][]float32
	w     float32
	first bool
}

// NewAccumulator allocates accumulation buffers shaped like params.
func NewAccumulator(params []Param) (*Accumulator, error) {
	if err := checkParams(params); err != nil {
		return nil, err
	}
	a := &Accumulator{params: cloneParams(params), sums: zeros(params), part: newPartition(sizes(params))}
	a.addJob = job{fn: a.addUnit, n: a.part.units()}
	a.mulJob = job{fn: a.scaleUnit, n: a.part.units()}
	return a, nil
}

// Add accumulates weight×grads. weight must be finite and > 0.
func (a *Accumulator) Add(grads [][]float32, weight float64) error {
	if !(weight > 0) || math.IsInf(weight, 0) {
		return fmt.Errorf("optim: accumulation weight %g must be finite and > 0", weight)
	}
	if a.averaged {
		return fmt.Errorf("optim: Add after Mean: call Reset to start a new accumulation")
	}
	if err := checkGrads(a.params, grads); err != nil {
		return err
	}
	a.grads, a.w, a.first = grads, float32(weight), a.count == 0
	a.addJob.run()
	a.grads = nil
	a.weight += weight
	a.count++
	return nil
}

// Count returns the number of Add calls since the last Reset.
func (a *Accumulator) Count() int { return a.count }

// Mean divides the sums by the total weight (once) and returns the averaged
// gradients, aligned with the parameters. The buffers stay owned by the
// Accumulator and are overwritten by the first Add after Reset.
func (a *Accumulator) Mean() ([][]float32, error) {
	if a.count == 0 {
		return nil, fmt.Errorf("optim: Mean of an empty accumulation")
	}
	if !a.averaged {
		a.w = float32(1 / a.weight)
		a.mulJob.run()
		a.averaged = true
	}
	return a.sums, nil
}

// Reset starts a new accumulation.
func (a *Accumulator) Reset() {
	a.count, a.weight, a.averaged = 0, 0, false
}

func (a *Accumulator) addUnit(u int) {
	for _, s := range a.part.unit(u) {
		dst, g := a.sums[s.t][s.lo:s.hi], a.grads[s.t][s.lo:s.hi]
		g = g[:len(dst)]
		if a.first {
			for i := range dst {
				dst[i] = a.w * g[i]
			}
		} else {
			for i := range dst {
				dst[i] += a.w * g[i]
			}
		}
	}
}

func (a *Accumulator) scaleUnit(u int) {
	for _, s := range a.part.unit(u) {
		dst := a.sums[s.t][s.lo:s.hi]
		for i := range dst {
			dst[i] *= a.w
		}
	}
}
