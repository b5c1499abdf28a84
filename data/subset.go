package data

import (
	"math/rand/v2"
	"slices"
)

// streamSubset is the random stream Subset draws from. It is fixed, not
// the run's seed: a subset of n items is the same whatever the seed, so
// runs of several seeds, and a teacher's logits written for the subset,
// see the same images.
const streamSubset uint64 = 0x535542534554

// labelSource is a dataset that knows its labels without decoding its images.
type labelSource interface {
	Label(i int) int
}

// Subset returns n items of ds (all of ds when n <= 0 or n >= ds.Len()),
// drawn so that they cover the classes: each class's items are shuffled
// by a fixed seed and taken in turn, class after class, until n are
// taken (a class with fewer items than its share gives the rest to the
// others). The items keep ds's order. A dataset that cannot give its
// labels without decoding its images (not a Memory or ImageFolder, nor a
// View of one) gets n items drawn uniformly, by the same fixed seed.
func Subset(ds Dataset, n int) Dataset {
	if n <= 0 || n >= ds.Len() {
		return ds
	}
	return NewView(ds, subsetIndex(ds, n))
}

// subsetIndex is the sorted (n,) indices of ds that Subset keeps.
func subsetIndex(ds Dataset, n int) []int {
	labels, ok := labelsOf(ds)
	if !ok {
		rng := rand.New(rand.NewPCG(streamSeed(0, streamSubset, ds.Len(), n)))
		picked := rng.Perm(ds.Len())[:n]
		slices.Sort(picked)
		return picked
	}
	return SubsetIndices(labels, len(ds.Classes()), n)
}

// labelsOf returns the labels of ds's items when it gives them without
// decoding its images: a labelSource, or a View of one (the held-out
// images of data.val_split, say).
func labelsOf(ds Dataset) ([]int, bool) {
	if l, ok := ds.(labelSource); ok {
		labels := make([]int, ds.Len())
		for i := range labels {
			labels[i] = l.Label(i)
		}
		return labels, true
	}
	var v View
	switch d := ds.(type) {
	case View:
		v = d
	case sourceView:
		v = d.View
	default:
		return nil, false
	}
	inner, ok := labelsOf(v.Dataset)
	if !ok {
		return nil, false
	}
	labels := make([]int, len(v.Indices))
	for i, j := range v.Indices {
		labels[i] = inner[j]
	}
	return labels, true
}

// SubsetIndices returns the sorted (n,) indices that Subset keeps of a
// data set whose items have the given labels, of classes classes, for
// 0 < n < len(labels): the items whose predictions score a run on
// data.eval_subset.
func SubsetIndices(labels []int, classes, n int) []int {
	rng := rand.New(rand.NewPCG(streamSeed(0, streamSubset, len(labels), n)))
	picked := stratified(labels, classes, n, rng)
	slices.Sort(picked)
	return picked
}

// stratified takes n of the items with the given labels, class by class
// in turn, each class's items in an order shuffled by rng.
func stratified(labels []int, classes, n int, rng *rand.Rand) []int {
	byClass := make([][]int, classes)
	for i, c := range labels {
		byClass[c] = append(byClass[c], i)
	}
	for _, items := range byClass {
		rng.Shuffle(len(items), func(a, b int) { items[a], items[b] = items[b], items[a] })
	}
	picked := make([]int, 0, n)
	for round := 0; len(picked) < n; round++ {
		for _, items := range byClass {
			if round < len(items) && len(picked) < n {
				picked = append(picked, items[round])
			}
		}
	}
	return picked
}
