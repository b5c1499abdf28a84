package data

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/vit-train/vit-train/augment"
	"github.com/vit-train/vit-train/formats/imageshard"
)

// photosEnv names the folder scripts/make_photo_set.py wrote; its default
// is datasets/photos at the repository's root.
const photosEnv = "VIT_TRAIN_PHOTOS"

// openPhotos opens the training split of the benchmark set of real
// photographs, or skips the benchmark when it has not been made.
func openPhotos(b *testing.B) *ImageFolder {
	b.Helper()
	root := os.Getenv(photosEnv)
	if root == "" {
		root = filepath.Join("..", "datasets", "photos")
	}
	ds, err := OpenImageFolder(filepath.Join(root, "train"), FolderOptions{})
	if err != nil {
		b.Skipf("no photo set (%v): make it with /usr/bin/python3 scripts/make_photo_set.py, or name its folder in %s", err, photosEnv)
	}
	return ds
}

// BenchmarkPhotos times, on one goroutine, what the loader does for each
// image of the photo set: read and decode it, then RandomResizedCrop 224
// (bicubic) + flip + normalise ("rrc-flip"), or DeiT's full augmentation
// ("deit": + RandAugment rand-m9-mstd0.5-inc1 + erasing 0.25), from the
// JPEG folder, from a prepared JPEG file and from a prepared raw file, both
// with the longer side at most 512: the photos' sizes, so the JPEG file
// holds the photos' own JPEGs. "eval" is the evaluation pipeline (resize
// to 256, centre crop 224, bicubic, normalise).
// "decode" is the read and decode alone. The pipelines convert only the
// crop to float32, as the loader does (augment.Source); "folder-whole"
// converts the whole image first, as the loader did before. cpu-ms/image
// is the process's CPU time per image.
func BenchmarkPhotos(b *testing.B) {
	folder := openPhotos(b)
	dir := b.TempDir()
	sources := []struct {
		name string
		ds   Dataset
	}{{"folder", folder}, {"folder-whole", itemsOnly{folder}}}
	for _, enc := range []imageshard.Encoding{imageshard.JPEG, imageshard.Raw} {
		opt := PrepareOptions{Source: "imagefolder", MaxSide: 512, Encoding: enc}
		if enc == imageshard.JPEG {
			opt.Quality = 90
		}
		path := filepath.Join(dir, enc.String()+PreparedExt)
		if err := WritePrepared(path, folder, opt); err != nil {
			b.Fatal(err)
		}
		p, err := OpenPrepared(path, 0)
		if err != nil {
			b.Fatal(err)
		}
		defer p.Close()
		sources = append(sources, struct {
			name string
			ds   Dataset
		}{"shard-" + enc.String(), p})
	}
	mean, std := ImageNetMeanStd()
	pipes := []struct {
		name string
		cfg  *augment.TrainConfig
	}{
		{"decode", nil},
		{"rrc-flip", &augment.TrainConfig{Size: 224, HFlip: 0.5, Interp: augment.Bicubic, Mean: mean, Std: std}},
		{"deit", new(augment.DeiTTrainConfig(224, mean, std))},
		{"eval", nil},
	}
	eval, err := augment.EvalPipeline(augment.EvalConfig{Size: 224, CropPct: 0.875, Interp: augment.Bicubic, Mean: mean, Std: std})
	if err != nil {
		b.Fatal(err)
	}
	for _, s := range sources {
		for _, pc := range pipes {
			b.Run(s.name+"/"+pc.name, func(b *testing.B) {
				var p *augment.Pipeline
				if pc.name == "eval" {
					p = &eval
				}
				if pc.cfg != nil {
					tp, err := augment.TrainPipeline(*pc.cfg)
					if err != nil {
						b.Fatal(err)
					}
					p = &tp
				}
				runItems(b, s.ds, p)
			})
		}
	}
}

// runItems decodes and (when p is set) augments b.N items of ds in turn on
// one goroutine, as the loader does, and reports the CPU time per image.
func runItems(b *testing.B, ds Dataset, p *augment.Pipeline) {
	rng := rand.New(rand.NewPCG(1, 2))
	dst := make([]float32, 3*224*224)
	var l *Loader
	if p != nil {
		var err error
		if l, err = NewLoader(LoaderConfig{Dataset: ds, BatchSize: 1, Pipeline: *p}); err != nil {
			b.Fatal(err)
		}
	}
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := range b.N {
		if l != nil {
			if _, err := l.loadItem(i%ds.Len(), rng, dst); err != nil {
				b.Fatal(err)
			}
			continue
		}
		img, _, err := ds.Item(i % ds.Len())
		if err != nil {
			b.Fatal(err)
		}
		augment.Recycle(img)
	}
	reportRates(b, b.N, cpu0)
}
