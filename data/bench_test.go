package data

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/vit-train/vit-train/augment"
)

// writeJPEGSet writes n 500x375 JPEGs (quality 90) in 4 class folders under
// dir: smooth colour fields with edges, texture and noise, about the size of
// ImageNet's photos. It returns the mean file size in bytes.
func writeJPEGSet(tb testing.TB, dir string, n int) int {
	tb.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	total := 0
	for i := range n {
		m := image.NewYCbCr(image.Rect(0, 0, 500, 375), image.YCbCrSubsampleRatio420)
		f1, f2 := 0.01+0.05*rng.Float64(), 0.01+0.05*rng.Float64()
		cx, cy, r := rng.Float64()*500, rng.Float64()*375, 50+rng.Float64()*120
		base := [3]float64{rng.Float64() * 255, rng.Float64() * 255, rng.Float64() * 255}
		img := image.NewNRGBA(m.Rect)
		for y := 0; y < 375; y++ {
			for x := 0; x < 500; x++ {
				var c [3]uint8
				inside := math.Hypot(float64(x)-cx, float64(y)-cy) < r
				for k := range c {
					v := base[k]*0.6 + 60*math.Sin(f1*float64(x)+float64(k)) + 40*math.Cos(f2*float64(y)*float64(k+1))
					if inside {
						v = 255 - v
					}
					v += 12 * rng.NormFloat64()
					c[k] = uint8(min(max(v, 0), 255))
				}
				img.SetNRGBA(x, y, color.NRGBA{c[0], c[1], c[2], 255})
			}
		}
		data := encodeJPEGQ(img, 90)
		total += len(data)
		p := filepath.Join(dir, fmt.Sprintf("class%d", i%4), fmt.Sprintf("img%04d.JPEG", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return total / n
}

// runLoader consumes b.N batches, across epochs, and reports images/s.
func runLoader(b *testing.B, l *Loader) {
	b.Helper()
	// one warm-up batch (pools, page cache)
	it := l.Epoch(0, 0)
	if !it.Next() {
		b.Fatal(it.Err())
	}
	it.Batch().Release()
	it.Close()
	images, epoch := 0, 1
	cpu0 := cpuTime()
	b.ResetTimer()
	it = l.Epoch(epoch, 0)
	for i := 0; i < b.N; i++ {
		if !it.Next() {
			if err := it.Err(); err != nil {
				b.Fatal(err)
			}
			epoch++
			it = l.Epoch(epoch, 0)
			i--
			continue
		}
		bt := it.Batch()
		images += bt.N
		bt.Release()
	}
	it.Close()
	reportRates(b, images, cpu0)
}

// reportRates reports images/s of wall time and the process CPU time per
// image (user + system, all goroutines), which does not depend on what else
// the machine runs; 1000/cpu-ms-per-image per core bounds the rate.
func reportRates(b *testing.B, images int, cpu0 time.Duration) {
	b.ReportMetric(float64(images)/b.Elapsed().Seconds(), "images/s")
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Millisecond)/float64(images), "cpu-ms/image")
}

// cpuTime returns the process's user + system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func imageNetLoader(b *testing.B, cfg augment.TrainConfig) *Loader {
	dir := b.TempDir()
	size := writeJPEGSet(b, dir, 64)
	b.Logf("64 JPEGs of 500x375, mean %d bytes; GOMAXPROCS %d", size, runtime.GOMAXPROCS(0))
	ds, err := OpenImageFolder(dir, FolderOptions{})
	if err != nil {
		b.Fatal(err)
	}
	p, err := augment.TrainPipeline(cfg)
	if err != nil {
		b.Fatal(err)
	}
	l, err := NewLoader(LoaderConfig{Dataset: ds, BatchSize: 32, Shuffle: true, Seed: 1, Pipeline: p})
	if err != nil {
		b.Fatal(err)
	}
	return l
}

// BenchmarkImageNetPipeline: decode JPEG 500x375 -> RandomResizedCrop 224
// (bicubic) -> flip -> normalise, GOMAXPROCS workers, batches of 32.
func BenchmarkImageNetPipeline(b *testing.B) {
	mean, std := ImageNetMeanStd()
	cfg := augment.TrainConfig{Size: 224, HFlip: 0.5, Interp: augment.Bicubic, Mean: mean, Std: std}
	runLoader(b, imageNetLoader(b, cfg))
}

// BenchmarkImageNetDeiTPipeline: as BenchmarkImageNetPipeline plus DeiT's
// RandAugment rand-m9-mstd0.5-inc1 and RandomErasing 0.25.
func BenchmarkImageNetDeiTPipeline(b *testing.B) {
	mean, std := ImageNetMeanStd()
	runLoader(b, imageNetLoader(b, augment.DeiTTrainConfig(224, mean, std)))
}

// BenchmarkCIFARRandAugment: 32x32 CIFAR-style images in memory -> DeiT's
// small-image pipeline (pad-crop 4 + flip + rand-m9-mstd0.5-inc1 + erasing),
// batches of 128.
func BenchmarkCIFARRandAugment(b *testing.B) {
	ds := &Memory{Name: "bench", N: 4096, C: 3, H: 32, W: 32, Pix: make([]uint8, 4096*3072), Labels: make([]int, 4096), ClassNames: MNISTClasses()}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range ds.Pix {
		ds.Pix[i] = uint8(rng.IntN(256))
	}
	cmean, cstd := CIFAR10MeanStd()
	p, err := augment.TrainPipeline(augment.DeiTTrainConfig(32, cmean, cstd))
	if err != nil {
		b.Fatal(err)
	}
	l, err := NewLoader(LoaderConfig{Dataset: ds, BatchSize: 128, Shuffle: true, Seed: 1, Pipeline: p})
	if err != nil {
		b.Fatal(err)
	}
	runLoader(b, l)
}

// BenchmarkDecodeJPEG500x375 decodes one file on one goroutine.
func BenchmarkDecodeJPEG500x375(b *testing.B) {
	dir := b.TempDir()
	writeJPEGSet(b, dir, 1)
	data, err := os.ReadFile(filepath.Join(dir, "class0", "img0000.JPEG"))
	if err != nil {
		b.Fatal(err)
	}
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		img, err := DecodeImage(data, "bench", 0)
		if err != nil {
			b.Fatal(err)
		}
		augment.Recycle(img)
	}
	reportRates(b, b.N, cpu0)
}
