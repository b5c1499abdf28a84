package safetensors

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
)

// WriteFileAtomic writes a safetensors file at path so that a crash leaves
// either the previous file or the complete new one: it writes a temporary
// file in the same directory, fsyncs it, renames it over path and fsyncs
// the directory. The file gets mode 0644. On error the temporary file is
// removed and path is untouched.
func WriteFileAtomic(path string, tensors []Tensor, metadata map[string]string) (err error) {
	if _, err := writeOrder(tensors, metadata, path); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("safetensors: %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := write(bw, tensors, metadata, path); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return ioErr(path, "writing", err)
	}
	if err := f.Chmod(0o644); err != nil {
		return ioErr(path, "setting the mode", err)
	}
	if err := f.Sync(); err != nil {
		return ioErr(path, "syncing", err)
	}
	if err := f.Close(); err != nil {
		return ioErr(path, "closing", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("safetensors: %w", err)
	}
	return syncDir(dir)
}

// syncDir fsyncs a directory so that a rename in it is durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("safetensors: syncing directory: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("safetensors: syncing directory %s: %w", dir, err)
	}
	return nil
}
