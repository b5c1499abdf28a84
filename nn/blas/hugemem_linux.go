//go:build !openblas

package blas

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePage is the size of a transparent huge page on x86-64 and arm64
// with 4 KiB base pages.
const hugePage = 2 << 20

// hugeFloats returns n zero floats, 64-byte aligned, for data that lives
// long and is read in long runs: at least a huge page of them is mapped
// outside the Go heap and marked for transparent huge pages, so that the
// kernels' reads of it miss the TLB far less often. owner's cleanup
// unmaps the memory when owner is collected. Smaller or unmappable
// requests come from the Go heap.
func hugeFloats[T any](owner *T, n int) []float32 {
	size := 4 * n
	if size < hugePage {
		return alignedFloats(n)
	}
	mapped := (size + hugePage - 1) / hugePage * hugePage
	mem, err := unix.Mmap(-1, 0, mapped+hugePage, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return alignedFloats(n)
	}
	skip := (hugePage - int(uintptr(unsafe.Pointer(&mem[0]))%hugePage)) % hugePage
	aligned := mem[skip : skip+mapped]
	_ = unix.Madvise(aligned, unix.MADV_HUGEPAGE) // advice only: without it, base pages
	runtime.AddCleanup(owner, func(m []byte) { _ = unix.Munmap(m) }, mem)
	return unsafe.Slice((*float32)(unsafe.Pointer(&aligned[0])), n)
}
