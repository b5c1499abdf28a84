package data

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// pyDistributedSampler transliterates DistributedSampler.__iter__ of
// PyTorch, step by step on lists, given its permutation.
func pyDistributedSampler(indices []int, rank, replicas int, dropLast bool) []int {
	n := len(indices)
	var numSamples int
	if dropLast && n%replicas != 0 {
		// math.ceil((len - num_replicas) / num_replicas), true division
		q := float64(n-replicas) / float64(replicas)
		numSamples = int(q)
		if float64(numSamples) < q {
			numSamples++
		}
	} else {
		numSamples = (n + replicas - 1) / replicas
	}
	total := numSamples * replicas
	idx := slices.Clone(indices)
	if !dropLast {
		pad := total - len(idx)
		if pad <= len(idx) {
			idx = append(idx, idx[:pad]...)
		} else {
			rep := (pad + len(idx) - 1) / len(idx)
			var many []int
			for range rep {
				many = append(many, idx...)
			}
			idx = append(idx, many[:pad]...)
		}
	} else {
		idx = idx[:total]
	}
	var out []int
	for p := rank; p < total; p += replicas {
		out = append(out, idx[p])
	}
	return out
}

// pyRASampler transliterates DeiT's RASampler.__iter__ (samplers.py), step
// by step on lists, given its permutation.
func pyRASampler(indices []int, rank, replicas, repeats int) []int {
	n := len(indices)
	numSamples := (n*repeats + replicas - 1) / replicas
	total := numSamples * replicas
	selected := n / 256 * 256 / replicas // floor of a non-negative quotient
	var idx []int
	for _, v := range indices { // torch.repeat_interleave
		for range repeats {
			idx = append(idx, v)
		}
	}
	if pad := total - len(idx); pad > 0 {
		idx = append(idx, idx[:pad]...)
	}
	var out []int
	for p := rank; p < total; p += replicas {
		out = append(out, idx[p])
	}
	return out[:selected]
}

// shardInts returns lo, lo+1, …, hi-1.
func shardInts(lo, hi int) []int {
	s := make([]int, 0, hi-lo)
	for i := lo; i < hi; i++ {
		s = append(s, i)
	}
	return s
}

// shardPerm returns a seeded permutation of [0, n).
func shardPerm(n int, seed uint64) []int {
	return rand.New(rand.NewPCG(seed, 1)).Perm(n)
}

func TestShardDistributedByHand(t *testing.T) {
	cases := []struct {
		order    []int
		replicas int
		dropLast bool
		want     [][]int // per rank
	}{
		// 7 items, 3 ranks: padded to 9 with 10, 11.
		{shardInts(10, 17), 3, false, [][]int{{10, 13, 16}, {11, 14, 10}, {12, 15, 11}}},
		// Divisible: no padding.
		{shardInts(10, 16), 3, false, [][]int{{10, 13}, {11, 14}, {12, 15}}},
		// More ranks than items: padded by repeating the order.
		{[]int{5, 6}, 5, false, [][]int{{5}, {6}, {5}, {6}, {5}}},
		{[]int{7, 8, 9}, 7, false, [][]int{{7}, {8}, {9}, {7}, {8}, {9}, {7}}},
		// drop_last: cut to 6.
		{shardInts(10, 17), 3, true, [][]int{{10, 13}, {11, 14}, {12, 15}}},
		{[]int{5, 6}, 5, true, [][]int{{}, {}, {}, {}, {}}},
		// One rank: the order itself.
		{[]int{3, 1, 2}, 1, false, [][]int{{3, 1, 2}}},
		{[]int{}, 2, false, [][]int{{}, {}}},
	}
	for _, tc := range cases {
		for r, want := range tc.want {
			got, err := DistributedShard(tc.order, r, tc.replicas, tc.dropLast)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("DistributedShard(%v, rank %d of %d, dropLast %v) = %v, want %v", tc.order, r, tc.replicas, tc.dropLast, got, want)
			}
		}
	}
}

func TestShardDistributedMatchesPyTorch(t *testing.T) {
	for n := 0; n <= 40; n++ {
		order := shardPerm(n, uint64(n))
		for replicas := 1; replicas <= 9; replicas++ {
			for _, dropLast := range []bool{false, true} {
				for r := range replicas {
					got, err := DistributedShard(order, r, replicas, dropLast)
					if err != nil {
						t.Fatal(err)
					}
					want := pyDistributedSampler(order, r, replicas, dropLast)
					if len(want) == 0 && len(got) == 0 {
						continue
					}
					if !slices.Equal(got, want) {
						t.Fatalf("n %d, rank %d of %d, dropLast %v: %v, want %v", n, r, replicas, dropLast, got, want)
					}
				}
			}
		}
	}
}

// TestShardUnionOfBatches checks the property that makes interleaved shards
// equivalent to one process with an N times larger batch: for every step k,
// the N ranks' k-th batches of b items together are, as a multiset, the k-th
// batch of N·b items of the padded order, and so exactly the single-process
// k-th batch of N·b items of the order itself whenever that batch holds no
// padding (every step except possibly the last). Over the epoch every item
// appears, and the only repeats are the padding.
func TestShardUnionOfBatches(t *testing.T) {
	for _, tc := range []struct{ n, replicas, b int }{
		{100, 4, 8}, {101, 4, 8}, {37, 3, 5}, {10, 4, 3}, {3, 5, 2}, {64, 1, 16},
	} {
		order := shardPerm(tc.n, 7)
		shards := make([][]int, tc.replicas)
		for r := range shards {
			var err error
			if shards[r], err = DistributedShard(order, r, tc.replicas, false); err != nil {
				t.Fatal(err)
			}
			if len(shards[r]) != len(shards[0]) {
				t.Fatalf("%+v: rank %d has %d items, rank 0 %d", tc, r, len(shards[r]), len(shards[0]))
			}
		}
		per := len(shards[0])
		total := per * tc.replicas
		big := tc.replicas * tc.b
		for k := 0; k*tc.b < per; k++ {
			var union []int
			for _, s := range shards {
				union = append(union, s[k*tc.b:min((k+1)*tc.b, per)]...)
			}
			var single []int // the single process's k-th batch of N·b over the padded order
			for p := k * big; p < min((k+1)*big, total); p++ {
				single = append(single, order[p%tc.n])
			}
			slices.Sort(union)
			slices.Sort(single)
			if !slices.Equal(union, single) {
				t.Fatalf("%+v: step %d: ranks' batches %v, single-process batch %v", tc, k, union, single)
			}
			if (k+1)*big <= tc.n { // no padding: the single process's batch of the order itself
				unpadded := slices.Clone(order[k*big : (k+1)*big])
				slices.Sort(unpadded)
				if !slices.Equal(union, unpadded) {
					t.Fatalf("%+v: step %d: %v, want %v", tc, k, union, unpadded)
				}
			}
		}
		count := make(map[int]int)
		for _, s := range shards {
			for _, i := range s {
				count[i]++
			}
		}
		extra := 0
		for _, i := range order {
			if count[i] == 0 {
				t.Fatalf("%+v: item %d on no rank", tc, i)
			}
			extra += count[i] - 1
		}
		if extra != total-tc.n {
			t.Errorf("%+v: %d repeated items, want the %d of the padding", tc, extra, total-tc.n)
		}
	}
}

func TestShardRepeatedAugByHand(t *testing.T) {
	// 256 items, 4 ranks, 3 repeats: 768 positions a a a b b b …, no
	// padding, 256/4 = 64 items per rank. Rank r takes positions r, r+4, …,
	// r+252, that is items position/3.
	order := make([]int, 256)
	for i := range order {
		order[i] = 1000 + i
	}
	firsts := [][]int{
		{1000, 1001, 1002, 1004, 1005, 1006, 1008, 1009}, // positions 0 4 8 12 16 20 24 28
		{1000, 1001, 1003, 1004, 1005, 1007, 1008, 1009}, // 1 5 9 13 17 21 25 29
		{1000, 1002, 1003, 1004, 1006, 1007, 1008, 1010}, // 2 6 10 14 18 22 26 30
		{1001, 1002, 1003, 1005, 1006, 1007, 1009, 1010}, // 3 7 11 15 19 23 27 31
	}
	lasts := []int{1084, 1084, 1084, 1085} // positions 252 253 254 255
	for r := range 4 {
		got, err := RepeatedAugShard(order, r, 4, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 64 || !slices.Equal(got[:8], firsts[r]) || got[63] != lasts[r] {
			t.Errorf("rank %d: %d items %v … %d, want 64 items %v … %d", r, len(got), got[:min(8, len(got))], got[len(got)-1], firsts[r], lasts[r])
		}
	}

	// 257 items, 2 ranks: 771 positions padded to 772; 256/2 = 128 items per
	// rank, positions 2j+r.
	order = shardInts(0, 257)
	r0, _ := RepeatedAugShard(order, 0, 2, 3)
	r1, _ := RepeatedAugShard(order, 1, 2, 3)
	if len(r0) != 128 || len(r1) != 128 ||
		!slices.Equal(r0[:6], []int{0, 0, 1, 2, 2, 3}) || !slices.Equal(r1[:6], []int{0, 1, 1, 2, 3, 3}) ||
		r0[127] != 84 || r1[127] != 85 { // positions 254 and 255
		t.Errorf("257 items on 2 ranks: %v… %v…", r0[:6], r1[:6])
	}

	// Fewer than 256 items: DeiT selects nothing.
	for _, n := range []int{0, 1, 255} {
		got, err := RepeatedAugShard(shardInts(0, n), 0, 1, 3)
		if err != nil || len(got) != 0 {
			t.Errorf("%d items: %v, %v; want no items", n, got, err)
		}
	}
	// One rank, 300 items: the first 256 positions, items 0..85.
	got, _ := RepeatedAugShard(shardInts(0, 300), 0, 1, 3)
	if len(got) != 256 || got[0] != 0 || got[1] != 0 || got[2] != 0 || got[3] != 1 || got[255] != 85 {
		t.Errorf("300 items on 1 rank: %v", got)
	}
}

func TestShardRepeatedAugMatchesDeiT(t *testing.T) {
	for _, n := range []int{0, 100, 256, 257, 511, 512, 700, 1000, 1025} {
		order := shardPerm(n, uint64(n)+3)
		for replicas := 1; replicas <= 8; replicas++ {
			for _, repeats := range []int{1, 2, 3, 4} {
				for r := range replicas {
					got, err := RepeatedAugShard(order, r, replicas, repeats)
					if err != nil {
						t.Fatal(err)
					}
					want := pyRASampler(order, r, replicas, repeats)
					if !slices.Equal(got, want) {
						t.Fatalf("n %d, rank %d of %d, repeats %d: %v, want %v", n, r, replicas, repeats, got, want)
					}
				}
			}
		}
	}
}

// TestShardRepeatedAugSpread checks what repeated augmentation is for: with
// at least as many ranks as repeats, the copies of an item in one step go to
// different ranks; and the union of the ranks' k-th batches is the k-th
// slice of N·b of the repeated order.
func TestShardRepeatedAugSpread(t *testing.T) {
	const n, replicas, repeats, b = 1024, 4, 3, 8
	order := shardPerm(n, 11)
	shards := make([][]int, replicas)
	for r := range shards {
		shards[r], _ = RepeatedAugShard(order, r, replicas, repeats)
	}
	per := len(shards[0])
	for k := 0; k < per/b; k++ {
		owners := make(map[int][]int)
		var union []int
		for r, s := range shards {
			for _, i := range s[k*b : (k+1)*b] {
				owners[i] = append(owners[i], r)
				union = append(union, i)
			}
		}
		for i, rs := range owners {
			if len(slices.Compact(slices.Sorted(slices.Values(rs)))) != len(rs) {
				t.Fatalf("step %d: item %d twice on one rank: ranks %v", k, i, rs)
			}
		}
		var want []int
		for p := k * replicas * b; p < (k+1)*replicas*b; p++ {
			want = append(want, order[p/repeats])
		}
		slices.Sort(union)
		slices.Sort(want)
		if !reflect.DeepEqual(union, want) {
			t.Fatalf("step %d: union %v, want %v", k, union, want)
		}
	}
}

// TestShardRepeatedAugCopies checks that (item, copy) pairs are unique over
// an epoch, for more and for fewer ranks than repeats.
func TestShardRepeatedAugCopies(t *testing.T) {
	for _, replicas := range []int{1, 2, 3, 4, 5} {
		const n, repeats = 600, 3
		order := shardPerm(n, 5)
		seen := make(map[[2]int]int)
		for r := range replicas {
			share, err := RepeatedAugShard(order, r, replicas, repeats)
			if err != nil {
				t.Fatal(err)
			}
			for j, item := range share {
				key := [2]int{item, RepeatedAugCopy(j, r, replicas, repeats)}
				if prev, ok := seen[key]; ok {
					t.Fatalf("%d ranks: item %d copy %d on rank %d and rank %d", replicas, key[0], key[1], prev, r)
				}
				seen[key] = r
			}
		}
		if len(seen) != n/256*256/replicas*replicas {
			t.Errorf("%d ranks: %d (item, copy) pairs", replicas, len(seen))
		}
	}
}

func TestShardErrors(t *testing.T) {
	for _, rr := range [][2]int{{0, 0}, {-1, 2}, {2, 2}} {
		if _, err := DistributedShard(shardInts(0, 4), rr[0], rr[1], false); err == nil {
			t.Errorf("DistributedShard rank %d of %d: no error", rr[0], rr[1])
		}
		if _, err := RepeatedAugShard(shardInts(0, 4), rr[0], rr[1], 3); err == nil {
			t.Errorf("RepeatedAugShard rank %d of %d: no error", rr[0], rr[1])
		}
	}
	if _, err := RepeatedAugShard(shardInts(0, 4), 0, 1, 0); err == nil {
		t.Error("RepeatedAugShard with 0 repeats: no error")
	}
}
