package ops

import (
	"sync/atomic"

	"github.com/vit-train/vit-train/nn/parallel"
)

// Randomness is the source of the random masks of Dropout and DropPath.
//
// Every mask op built with a Randomness gets the next stream id of that
// Randomness when it is created, so a graph built in the same order always
// gives its ops the same ids. At each run an op derives its mask from
// (seed, stream id, step) alone, with a counter-based generator, so masks do
// not depend on how many runs came before, on how the work was split over
// cores, or on whether the forward or the backward node ran first: a run
// resumed at step k draws exactly the masks of the original run at step k.
//
// Call SetStep once per training step, before running the graph. Runs at the
// same step reuse the same masks (what a finite-difference check needs).
type Randomness struct {
	seed    uint64
	step    atomic.Uint64
	streams atomic.Uint64
}

// NewRandomness returns a Randomness with the given seed, at step 0.
func NewRandomness(seed uint64) *Randomness {
	return &Randomness{seed: seed}
}

// Seed returns the seed the Randomness was created with.
func (r *Randomness) Seed() uint64 { return r.seed }

// SetStep selects the masks of the given training step.
func (r *Randomness) SetStep(step uint64) { r.step.Store(step) }

// Step returns the current step.
func (r *Randomness) Step() uint64 { return r.step.Load() }

// Streams returns how many mask ops have been created with r.
func (r *Randomness) Streams() uint64 { return r.streams.Load() }

// newStream returns the next stream id: 0, 1, 2, … in creation order.
func (r *Randomness) newStream() uint64 { return r.streams.Add(1) - 1 }

// streamKey is the generator key of one stream at one step.
func (r *Randomness) streamKey(stream, step uint64) uint64 {
	k := splitMix64(r.seed ^ 0x6a09e667f3bcc908)
	k = splitMix64(k + stream*splitMixGamma)
	return splitMix64(k + step*splitMixGamma)
}

const splitMixGamma = 0x9e3779b97f4a7c15

// splitMix64 is the output function of SplitMix64 (Steele, Lea, Flood 2014):
// a bijective mixer whose outputs at key + i·γ form a high-quality sequence.
func splitMix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// fillKeep sets keep[i] to 1 with probability 1−p and to 0 otherwise. Entry
// i uses the 32-bit half i%2 of word i/2 of the SplitMix64 sequence of key, so
// the result depends on key alone, whatever the split over workers.
func fillKeep(keep []uint8, key uint64, p float64) {
	threshold := uint64(p * (1 << 32)) // keep when a uniform 32-bit draw is ≥ threshold
	parallel.Loop((len(keep)+1)/2, 1<<14, keepWords{keep, key, threshold})
}

// keepWords is fillKeep over a range of 64-bit words.
type keepWords struct {
	keep           []uint8
	key, threshold uint64
}

func (k *keepWords) Range(lo, hi int) {
	for w := lo; w < hi; w++ {
		u := splitMix64(k.key + uint64(w+1)*splitMixGamma)
		k.keep[2*w] = keepBit(u&0xffffffff, k.threshold)
		if 2*w+1 < len(k.keep) {
			k.keep[2*w+1] = keepBit(u>>32, k.threshold)
		}
	}
}

func keepBit(u, threshold uint64) uint8 {
	if u >= threshold {
		return 1
	}
	return 0
}
