package tmpfs

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A mounted tmpfs holds what fits in its size, refuses more with ENOSPC and,
// remounted read-only, refuses to create files with EROFS.
func TestMount(t *testing.T) {
	dir := Mount(t, "64k")
	if err := os.WriteFile(filepath.Join(dir, "small"), make([]byte, 16<<10), 0o644); err != nil {
		t.Fatalf("16 KiB into a 64 KiB tmpfs: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "big"), make([]byte, 256<<10), 0o644); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("256 KiB into a 64 KiB tmpfs: %v, want ENOSPC", err)
	}
	RemountReadOnly(t, dir)
	if err := os.WriteFile(filepath.Join(dir, "new"), nil, 0o644); !errors.Is(err, syscall.EROFS) {
		t.Fatalf("creating a file after RemountReadOnly: %v, want EROFS", err)
	}
}
