package data

import (
	"slices"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/augment"
)

// repeatedLoader loads 300 random 8×8 images with DeiT's augmentation as
// rank of replicas, with repeats copies of each item (1: off).
func repeatedLoader(t *testing.T, rank, replicas, repeats int) *Loader {
	t.Helper()
	ds := indexDataset(300, 3, 8, 8)
	for i := range ds.Pix {
		ds.Pix[i] = uint8(i * 7919 % 251)
	}
	p, err := augment.TrainPipeline(augment.DeiTTrainConfig(8, []float32{0.5, 0.5, 0.5}, []float32{0.2, 0.2, 0.2}))
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewLoader(LoaderConfig{Dataset: ds, BatchSize: 16, Shuffle: true, Seed: 9, Workers: 2, Pipeline: p,
		Rank: rank, Replicas: replicas, RepeatedAug: repeats})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// flatten joins an epoch's batches into per-item images and indices.
func flatten(imgs [][]float32, idx [][]int) (images [][]float32, indices []int) {
	for k, b := range idx {
		size := len(imgs[k]) / len(b)
		for j := range b {
			images = append(images, imgs[k][j*size:(j+1)*size])
			indices = append(indices, b[j])
		}
	}
	return images, indices
}

// TestLoaderRepeatedAug checks the loader against RepeatedAugShard on
// every rank of 1 and 2, and that the copies of an item are augmented
// differently, the first one as without repetition.
func TestLoaderRepeatedAug(t *testing.T) {
	plainImgs, _, plainIdx := collect(t, repeatedLoader(t, 0, 1, 1), 1, 0)
	plain := map[int][]float32{}
	images, indices := flatten(plainImgs, plainIdx)
	for i, item := range indices {
		plain[item] = images[i]
	}
	for _, replicas := range []int{1, 2} {
		for rank := range replicas {
			l := repeatedLoader(t, rank, replicas, 3)
			if want := 256 / replicas; l.Len() != want {
				t.Fatalf("rank %d of %d: Len %d, want %d (300//256·256 items over the ranks)", rank, replicas, l.Len(), want)
			}
			imgs, _, idx := collect(t, l, 1, 0)
			images, indices := flatten(imgs, idx)
			want, err := RepeatedAugShard(l.permutation(1), rank, replicas, 3)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(indices, want) {
				t.Fatalf("rank %d of %d: items %v…, want %v…", rank, replicas, indices[:9], want[:9])
			}
			firstSeen := map[int][]float32{}
			for j, item := range indices {
				c := RepeatedAugCopy(j, rank, replicas, 3)
				if c == 0 && !slices.Equal(images[j], plain[item]) {
					t.Fatalf("rank %d of %d: the first copy of item %d is augmented unlike the item without repetition", rank, replicas, item)
				}
				if prev, ok := firstSeen[item]; ok && slices.Equal(prev, images[j]) {
					t.Fatalf("rank %d of %d: two copies of item %d are augmented alike", rank, replicas, item)
				}
				firstSeen[item] = images[j]
			}
		}
	}
	// A resumed epoch gives the same copies their same augmentation.
	l := repeatedLoader(t, 1, 2, 3)
	full, _, _ := collect(t, l, 2, 0)
	tail, _, _ := collect(t, l, 2, 3)
	for k := range tail {
		if !slices.Equal(tail[k], full[k+3]) {
			t.Fatalf("batch %d differs when the epoch starts at batch 3", k+3)
		}
	}
}

func TestLoaderRepeatedAugErrors(t *testing.T) {
	ds := indexDataset(10, 1, 2, 2)
	for _, cfg := range []LoaderConfig{
		{Dataset: ds, BatchSize: 2, RepeatedAug: -1},
		{Dataset: ds, BatchSize: 2, RepeatedAug: 3, Replicas: 2, UnevenShards: true},
	} {
		if _, err := NewLoader(cfg); err == nil || !strings.Contains(err.Error(), "RepeatedAug") {
			t.Errorf("%+v: want an error naming RepeatedAug, got %v", cfg, err)
		}
	}
}
