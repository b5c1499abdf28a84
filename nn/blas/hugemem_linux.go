//go:build !openblas

package blas

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/vit-train/vit-train/internal/hugepages"
)

// hugeFloats returns n zero floats, 64-byte aligned, for data that lives
// long and is read in long runs: at least a huge page of them is mapped
// outside the Go heap and marked for transparent huge pages, so that the
// kernels' reads of it miss the TLB far less often. owner's cleanup
// unmaps the memory when owner is collected. Smaller or unmappable
// requests come from the Go heap.
func hugeFloats[T any](owner *T, n int) []float32 {
	size := 4 * n
	if size < hugepages.Size {
		return alignedFloats(n)
	}
	mapped := (size + hugepages.Size - 1) / hugepages.Size * hugepages.Size
	mem, err := unix.Mmap(-1, 0, mapped+hugepages.Size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return alignedFloats(n)
	}
	skip := (hugepages.Size - int(uintptr(unsafe.Pointer(&mem[0]))%hugepages.Size)) % hugepages.Size
	aligned := mem[skip : skip+mapped]
	hugepages.Advise(aligned)
	runtime.AddCleanup(owner, func(m []byte) { _ = unix.Munmap(m) }, mem)
	return unsafe.Slice((*float32)(unsafe.Pointer(&aligned[0])), n)
}
