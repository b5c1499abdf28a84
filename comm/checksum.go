package comm

import (
	"fmt"
	"hash/crc32"
	"strings"
	"unsafe"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Checksum returns the CRC-32C of the bytes of params, tensor after tensor,
// as they lie in memory. Two ranks of one machine type hold bit-identical
// parameters exactly when their checksums agree (up to CRC collisions).
func Checksum(params [][]float32) uint32 {
	var h uint32
	for _, p := range params {
		if len(p) == 0 {
			continue
		}
		b := unsafe.Slice((*byte)(unsafe.Pointer(&p[0])), 4*len(p))
		h = crc32.Update(h, castagnoli, b)
	}
	return h
}

// CheckReplicas compares the [Checksum] of params across the ranks of c. It
// returns nil when every rank holds the same bytes, and otherwise, on every
// rank alike, an error that gives rank 0's checksum and names the ranks whose
// checksum differs from it. It is a collective operation: one allreduce of
// Size int64 values.
func CheckReplicas(c Communicator, params [][]float32) error {
	sums := make([]int64, c.Size())
	sums[c.Rank()] = int64(Checksum(params))
	if err := c.AllreduceSumInt64(sums); err != nil {
		return fmt.Errorf("comm: checking replicas: %w", err)
	}
	var differ []string
	for r, s := range sums[1:] {
		if s != sums[0] {
			differ = append(differ, fmt.Sprintf("rank %d (%08x)", r+1, uint32(s)))
		}
	}
	if len(differ) == 0 {
		return nil
	}
	return fmt.Errorf("comm: parameters differ across ranks: rank 0 has checksum %08x, %d of %d ranks differ: %s",
		uint32(sums[0]), len(differ), len(sums), strings.Join(differ, ", "))
}

// BroadcastTensors copies root's tensors into every other rank's, tensor by
// tensor: at the start of training, it gives every rank rank 0's initial
// weights, as DistributedDataParallel does when it wraps a model. Every rank
// passes tensors of the same sizes.
func BroadcastTensors(c Communicator, tensors [][]float32, root int) error {
	for i, t := range tensors {
		if err := c.BroadcastFloat32(t, root); err != nil {
			return fmt.Errorf("comm: broadcasting tensor %d of %d: %w", i, len(tensors), err)
		}
	}
	return nil
}
