//go:build linux

package atomicfile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// mountTmpfs mounts a tmpfs of the given size (e.g. "64k") on a new
// folder, unmounted when the test ends; it skips the test where mounting
// is not permitted (not root, no CAP_SYS_ADMIN, a restricted container).
func mountTmpfs(t *testing.T, size string) string {
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

// A real full disk: the new file does not fit, the old one survives and
// the temporary file's space is given back.
func TestWriteFullDisk(t *testing.T) {
	dir := mountTmpfs(t, "64k")
	path := filepath.Join(dir, "last.safetensors")
	old := bytes.Repeat([]byte("old"), 1000)
	if err := Write(path, writeBytes(old)); err != nil {
		t.Fatal(err)
	}
	err := Write(path, writeBytes(make([]byte, 256<<10)))
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("got %v, want ENOSPC", err)
	}
	checkUntouched(t, dir, path, old)
	// Nothing leaked: a write that fits still succeeds.
	small := bytes.Repeat([]byte("new"), 10000)
	if err := Write(path, writeBytes(small)); err != nil {
		t.Fatalf("a write that fits after the failure: %v", err)
	}
	checkUntouched(t, dir, path, small)
}

// A read-only file system: nothing can be created, the old file survives.
func TestWriteReadOnly(t *testing.T) {
	dir := mountTmpfs(t, "64k")
	path := filepath.Join(dir, "last.safetensors")
	old := []byte("old checkpoint")
	if err := Write(path, writeBytes(old)); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Skipf("cannot remount read-only: %v", err)
	}
	err := Write(path, writeBytes([]byte("new")))
	var e *Error
	if !errors.As(err, &e) || e.Op != "create temporary file" || !errors.Is(err, syscall.EROFS) {
		t.Fatalf("got %v, want EROFS creating the temporary file", err)
	}
	checkUntouched(t, dir, path, old)
	if err := os.Remove(path); !errors.Is(err, syscall.EROFS) {
		t.Fatalf("the mount is not read-only: %v", err)
	}
}
