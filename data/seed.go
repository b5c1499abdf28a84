package data

// Random streams of the loader, each derived from (seed, stream, epoch, i)
// so that results depend neither on the number of workers nor on the order
// in which items are processed.
const (
	streamShuffle uint64 = 0x5348554646 // epoch order
	streamItem    uint64 = 0x4954454d   // per-item augmentation
	streamBatch   uint64 = 0x4241544348 // per-batch augmentation (Mixup/CutMix)
)

// splitmix64 is the SplitMix64 finaliser, a bijective 64-bit mixer.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// streamSeed returns the two PCG seed words of stream for (seed, epoch, i).
func streamSeed(seed, stream uint64, epoch, i int) (uint64, uint64) {
	h := splitmix64(seed ^ splitmix64(stream))
	h = splitmix64(h ^ uint64(epoch))
	h = splitmix64(h ^ uint64(i))
	return h, splitmix64(h ^ stream)
}
