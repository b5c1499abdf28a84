//go:build linux

package atomicfile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/vit-train/vit-train/internal/tmpfs"
)

// A real full disk: the new file does not fit, the old one survives and
// the temporary file's space is given back.
func TestWriteFullDisk(t *testing.T) {
	dir := tmpfs.Mount(t, "64k")
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
	dir := tmpfs.Mount(t, "64k")
	path := filepath.Join(dir, "last.safetensors")
	old := []byte("old checkpoint")
	if err := Write(path, writeBytes(old)); err != nil {
		t.Fatal(err)
	}
	tmpfs.RemountReadOnly(t, dir)
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
