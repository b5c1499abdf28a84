package data

import "fmt"

// Sharding of an epoch across the ranks of a data-parallel job.
//
// Every rank draws the same epoch order (the same seed and epoch give the
// same permutation on every rank) and keeps its share of it. Shares are
// interleaved, element r, r+N, r+2N, … for rank r of N, so the union of the
// N ranks' k-th batches of b items is the k-th slice of N·b items of the
// (padded) order: a job of N ranks with per-rank batch b sees, step by step,
// the batches a single process with batch N·b would see, as a multiset.

// DistributedShard returns rank's share of an epoch's order in a job of
// replicas ranks, as PyTorch's DistributedSampler computes it from its
// permutation:
//
//   - dropLast false: the order is padded to total = ceil(len/replicas)·replicas
//     by repeating it from its start (order[:total-len], repeated as often as
//     needed when replicas > len), and rank r gets padded[r::replicas];
//   - dropLast true: the order is cut to total = floor(len/replicas)·replicas
//     items (DistributedSampler's ceil((len-replicas)/replicas)·replicas when
//     len is not a multiple of replicas), and rank r gets
//     order[r:total:replicas].
//
// Every rank gets the same number of items, so all take the same number of
// steps per epoch. An empty order gives empty shares.
func DistributedShard(order []int, rank, replicas int, dropLast bool) ([]int, error) {
	if err := checkRank(rank, replicas); err != nil {
		return nil, err
	}
	n := len(order)
	if n == 0 {
		return []int{}, nil
	}
	per := (n + replicas - 1) / replicas
	if dropLast {
		per = n / replicas // = ceil((n-replicas)/replicas) when n%replicas != 0, 0 if n < replicas
	}
	share := make([]int, per)
	for j := range share {
		share[j] = order[(rank+j*replicas)%n] // position p >= n is padding: order[p-n], cyclically
	}
	return share, nil
}

// RepeatedAugShard returns rank's share of an epoch's order in a job of
// replicas ranks with repeated augmentation, exactly as DeiT's RASampler
// (samplers.py) computes it from its permutation with num_repeats = repeats
// (DeiT uses 3):
//
//	num_samples          = ceil(len·repeats / replicas)
//	total_size           = num_samples · replicas
//	num_selected_samples = floor(len // 256 · 256 / replicas)
//	indices              = repeat_interleave(order, repeats)   // a a a b b b …
//	indices             += indices[:total_size - len(indices)] // padding
//	share                = indices[rank:total_size:replicas][:num_selected_samples]
//
// Each item appears repeats times in a row, so with replicas >= repeats its
// copies go to different ranks, each with its own augmentation. Every rank
// gets num_selected_samples items: the epoch holds len//256·256 items in all
// (copies counted), about len/repeats distinct ones, and a dataset of fewer
// than 256 items gives empty shares. The kept positions (below
// num_selected_samples·replicas <= len·repeats) never reach the padding, so
// the share is order[(rank + j·replicas) / repeats] for j <
// num_selected_samples; DeiT's assertion that the padding fits, which fails
// when len·repeats < replicas-1, has no counterpart here.
func RepeatedAugShard(order []int, rank, replicas, repeats int) ([]int, error) {
	if err := checkRank(rank, replicas); err != nil {
		return nil, err
	}
	if repeats < 1 {
		return nil, fmt.Errorf("data: repeated augmentation: %d repeats, want >= 1", repeats)
	}
	n := len(order)
	selected := n / 256 * 256 / replicas
	share := make([]int, selected)
	for j := range share {
		share[j] = order[(rank+j*replicas)/repeats]
	}
	return share, nil
}

// RepeatedAugCopy returns which copy, in [0, repeats), of its item the j-th
// element of rank's [RepeatedAugShard] share is. The pair (item, copy) is
// unique within an epoch, so it is the key to seed that element's
// augmentation with: seeded by the item alone, the copies of an item would be
// augmented alike, on different ranks and, with fewer ranks than repeats, on
// the same rank.
func RepeatedAugCopy(j, rank, replicas, repeats int) int {
	return (rank + j*replicas) % repeats
}

// checkRank returns an error unless rank is a rank of a job of replicas.
func checkRank(rank, replicas int) error {
	if replicas < 1 {
		return fmt.Errorf("data: shard: %d replicas, want >= 1", replicas)
	}
	if rank < 0 || rank >= replicas {
		return fmt.Errorf("data: shard: rank %d outside [0, %d)", rank, replicas)
	}
	return nil
}
