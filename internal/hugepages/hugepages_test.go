package hugepages

import (
	"testing"
	"unsafe"
)

// TestMakeAligns checks that Make's slices start on a 64-byte boundary
// and hold exactly n values, for small and large n and element sizes.
func TestMakeAligns(t *testing.T) {
	for _, n := range []int{0, 1, 3, 17, 1000, 3 * Size / 4} {
		for i := 0; i < 8; i++ { // different places in the heap
			f := Make[float32](n)
			d := Make[float64](n)
			if len(f) != n || cap(f) != n || len(d) != n || cap(d) != n {
				t.Fatalf("Make(%d): lengths %d, %d and capacities %d, %d", n, len(f), len(d), cap(f), cap(d))
			}
			if n == 0 {
				continue
			}
			if a := uintptr(unsafe.Pointer(&f[0])) % 64; a != 0 {
				t.Fatalf("Make[float32](%d) starts %d bytes past a 64-byte boundary", n, a)
			}
			if a := uintptr(unsafe.Pointer(&d[0])) % 64; a != 0 {
				t.Fatalf("Make[float64](%d) starts %d bytes past a 64-byte boundary", n, a)
			}
			_ = Make[byte](5) // move the next allocation off a line
		}
	}
}
