//go:build linux || darwin || freebsd

package imageshard

import (
	"math"
	"os"
	"syscall"
)

// mapFile maps the size bytes of f read-only, or returns nil where they
// cannot be mapped (then the Reader reads with ReadAt).
func mapFile(f *os.File, size int64) []byte {
	if size <= 0 || size > math.MaxInt {
		return nil
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil
	}
	return b
}

// unmapFile releases mapFile's mapping.
func unmapFile(b []byte) error { return syscall.Munmap(b) }
