package data

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// streamHoldOut is the random stream that draws a held-out split.
const streamHoldOut uint64 = 0x484f4c444f5554

// HoldOut splits ds into a training part and a held-out validation part
// of round(fraction·Len) items, drawn without replacement by a generator
// seeded with seed alone: the same seed and dataset give the same split
// whatever else the run sets. Both parts keep the dataset's order. The
// fraction must be in (0, 1) and leave at least one item in each part.
func HoldOut(ds Dataset, fraction float64, seed uint64) (train, val View, err error) {
	n := ds.Len()
	if !(fraction > 0 && fraction < 1) {
		return train, val, fmt.Errorf("data: held-out fraction %v: want a fraction in (0, 1)", fraction)
	}
	k := int(math.Round(fraction * float64(n)))
	if k < 1 || k > n-1 {
		return train, val, fmt.Errorf("data: held-out fraction %v of %d items holds out %d: each part needs at least one item", fraction, n, k)
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	rng := rand.New(rand.NewPCG(streamSeed(seed, streamHoldOut, 0, 0)))
	rng.Shuffle(n, func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
	held, kept := idx[:k], idx[k:]
	slices.Sort(held)
	slices.Sort(kept)
	return View{ds, kept}, View{ds, held}, nil
}
