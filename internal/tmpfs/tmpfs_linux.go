// Package tmpfs mounts small, size-limited file systems for tests that need
// a disk that fills up or turns read-only.
package tmpfs

import (
	"syscall"
	"testing"
)

// Mount mounts a tmpfs of the given size (e.g. "64k") on a new folder,
// unmounted when the test ends, and returns the folder. It skips the test
// where mounting is not permitted (not root, no CAP_SYS_ADMIN, a restricted
// container).
func Mount(t testing.TB, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmounting %s: %v", dir, err)
		}
	})
	return dir
}

// RemountReadOnly makes the tmpfs Mount returned read-only, skipping the
// test where that is not permitted.
func RemountReadOnly(t testing.TB, dir string) {
	t.Helper()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Skipf("cannot remount read-only: %v", err)
	}
}
