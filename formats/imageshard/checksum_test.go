package imageshard

import (
	"bytes"
	"hash/crc32"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestChecksumMatchesCRC32 checks Checksum against hash/crc32's CRC-32C
// for lengths on both sides of foldMin and of each multiple of foldBlock,
// at every alignment of the first byte, and an image's worth of bytes.
func TestChecksumMatchesCRC32(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 3*224*224+7)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	lengths := []int{0, 1, 3, 255, 256, 257, foldMin - 1, foldMin, foldMin + 1, 3 * 224 * 224}
	for n := foldMin - 2*foldBlock; n <= foldMin+4*foldBlock; n += foldBlock / 2 {
		lengths = append(lengths, n-1, n, n+1)
	}
	for _, n := range lengths {
		for off := range 8 {
			b := data[off : off+n]
			if got, want := Checksum(b), crc32.Checksum(b, castagnoli); got != want {
				t.Fatalf("%d bytes at offset %d: %08x, want %08x", n, off, got, want)
			}
		}
	}
}

// TestChecksumSeesEveryBit flips each bit of a 2 KB input in turn: the
// checksum changes, as hash/crc32's does, wherever the bit is (every lane
// of the first and the last block, and the tail).
func TestChecksumSeesEveryBit(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	b := make([]byte, 2*foldMin+37)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	orig := Checksum(b)
	for i := range len(b) * 8 {
		b[i/8] ^= 1 << (i % 8)
		got, want := Checksum(b), crc32.Checksum(b, castagnoli)
		b[i/8] ^= 1 << (i % 8)
		if got != want || got == orig {
			t.Fatalf("bit %d flipped: %08x, want %08x (unflipped %08x)", i, got, want, orig)
		}
	}
}

// TestFoldUpdateFromState checks the kernel on its own from registers
// other than the initial one, as crc32.Update continues a checksum.
func TestFoldUpdateFromState(t *testing.T) {
	if foldUpdate == nil {
		t.Skip("no folding kernel on this processor")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{foldBlock, 2 * foldBlock, 7 * foldBlock, 64 * foldBlock} {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		for _, state := range []uint32{0, 1, 0x80000000, 0xFFFFFFFF, rng.Uint32()} {
			if got, want := foldUpdate(state, b), ^crc32.Update(^state, castagnoli, b); got != want {
				t.Fatalf("%d bytes from %08x: %08x, want %08x", n, state, got, want)
			}
		}
	}
}

// A flipped byte in a large item (one the folding kernel checks) is
// reported naming the file and the item.
func TestBadLargeItemCRC(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	big := make([]byte, 48*48)
	for i := range big {
		big[i] = byte(rng.Uint32())
	}
	items := append(testItems(), item{big, 0, 48, 48, Raw})
	meta := testMeta()
	meta.MaxSide = 48
	for _, at := range []int{0, 1000, len(big) - 1} {
		b := encode(t, meta, items)
		start := headerSize + 6 + len("not really a JPEG") + 64
		b[start+at] ^= 0x04
		r, err := NewReader(bytes.NewReader(b), int64(len(b)), "photos/train.shard")
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.Read(3, nil)
		if err == nil || !strings.Contains(err.Error(), "photos/train.shard: item 3: CRC-32C") {
			t.Errorf("byte %d flipped: %v, want a CRC-32C error naming the file and item 3", at, err)
		}
		if _, err := r.Read(2, nil); err != nil {
			t.Errorf("item 2: %v", err)
		}
	}
}

// FuzzChecksum checks Checksum against hash/crc32 on any input.
func FuzzChecksum(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("123456789"))
	f.Add(bytes.Repeat([]byte{0xA5}, foldMin))
	f.Add(bytes.Repeat([]byte{1, 2, 3}, 2*foldMin/3+100))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := Checksum(b), crc32.Checksum(b, castagnoli); got != want {
			t.Fatalf("%d bytes: %08x, want %08x", len(b), got, want)
		}
	})
}
