package imageshard

import "hash/crc32"

// Checksum returns the CRC-32C (Castagnoli) of b, as records hold it: its
// multiples of foldBlock bytes by foldUpdate where the processor has it
// and b has at least foldMin bytes, the rest (or all) by hash/crc32.
func Checksum(b []byte) uint32 {
	n := len(b) &^ (foldBlock - 1)
	if foldUpdate == nil || n < foldMin {
		return crc32.Checksum(b, castagnoli)
	}
	return crc32.Update(^foldUpdate(^uint32(0), b[:n]), castagnoli, b[n:])
}

const (
	// foldBlock is the bytes foldUpdate consumes at a time.
	foldBlock = 256
	// foldMin is the shortest input Checksum gives foldUpdate.
	foldMin = 1024
)

// foldUpdate is nil, or a kernel that returns the CRC-32C register after
// the bytes of p (a positive multiple of foldBlock bytes) from the register
// state: the CRC32 instruction's register, which hash/crc32's checksum
// holds inverted.
var foldUpdate func(state uint32, p []byte) uint32
