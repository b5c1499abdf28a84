package hugepages

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Advise marks the whole huge pages inside s's memory for transparent
// huge pages (madvise MADV_HUGEPAGE), so that where Linux leaves that to
// the program (/sys/kernel/mm/transparent_hugepage/enabled set to
// madvise) they are faulted in as huge pages when first written. It is
// advice only: pages already faulted in stay as they are until Linux
// collapses them, and an error leaves base pages.
func Advise[T any](s []T) {
	if len(s) == 0 {
		return
	}
	base := unsafe.Pointer(unsafe.SliceData(s))
	start := uintptr(base)
	end := start + uintptr(len(s))*unsafe.Sizeof(s[0])
	first := (start + Size - 1) &^ (Size - 1)
	last := end &^ (Size - 1)
	if last <= first {
		return
	}
	_ = unix.Madvise(unsafe.Slice((*byte)(unsafe.Add(base, first-start)), last-first), unix.MADV_HUGEPAGE)
}
