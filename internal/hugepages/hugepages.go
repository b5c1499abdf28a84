// Package hugepages asks the operating system for transparent huge pages
// under the large buffers a training step streams through: activations,
// gradients and their like. With 4 KiB pages each row of a wide matrix
// lies in a page of its own, the matrix kernels' stores and loads miss
// the TLB, and the hardware prefetchers stop at every page boundary.
package hugepages

import "unsafe"

// Size is the size of a transparent huge page on x86-64 and arm64 with
// 4 KiB base pages.
const Size = 2 << 20

// Make returns n zero values, the first on a 64-byte boundary (a cache
// line, where the SIMD kernels' loads and stores want them), their memory
// marked for huge pages (see Advise) when it spans at least one.
func Make[T any](n int) []T {
	size := int(unsafe.Sizeof(*new(T)))
	if size == 0 || 64%size != 0 {
		s := make([]T, n)
		Advise(s)
		return s
	}
	line := 64 / size
	raw := make([]T, n+line-1)
	off := (line - int(uintptr(unsafe.Pointer(unsafe.SliceData(raw)))%64)/size) % line
	s := raw[off : off+n : off+n]
	Advise(s)
	return s
}
