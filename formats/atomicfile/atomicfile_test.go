package atomicfile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// faultyFile is a real temporary file whose writes fail after failAfter
// bytes (when failAfter >= 0) and whose Sync, Close or Chmod fail when set.
type faultyFile struct {
	*os.File
	failAfter           int
	written             int
	failSync, failClose bool
	failChmod           bool
}

var errInjected = errors.New("injected fault")

func (f *faultyFile) Write(p []byte) (int, error) {
	if f.failAfter >= 0 && f.written+len(p) > f.failAfter {
		n := f.failAfter - f.written
		m, _ := f.File.Write(p[:n])
		f.written += m
		return m, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	n, err := f.File.Write(p)
	f.written += n
	return n, err
}

func (f *faultyFile) Sync() error {
	if f.failSync {
		return &os.PathError{Op: "sync", Path: f.Name(), Err: syscall.EIO}
	}
	return f.File.Sync()
}

func (f *faultyFile) Close() error {
	err := f.File.Close()
	if f.failClose {
		return &os.PathError{Op: "close", Path: f.Name(), Err: syscall.EDQUOT}
	}
	return err
}

func (f *faultyFile) Chmod(m os.FileMode) error {
	if f.failChmod {
		return &os.PathError{Op: "chmod", Path: f.Name(), Err: syscall.EPERM}
	}
	return f.File.Chmod(m)
}

// inject makes Write's temporary files fail as fault describes, for the
// rest of the test.
func inject(t *testing.T, fault faultyFile) {
	t.Helper()
	orig := createTemp
	t.Cleanup(func() { createTemp = orig })
	createTemp = func(dir, pattern string) (tempFile, error) {
		f, err := os.CreateTemp(dir, pattern)
		if err != nil {
			return nil, err
		}
		ff := fault
		ff.File = f
		return &ff, nil
	}
}

// listDir returns the names in dir.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// checkUntouched asserts that dir holds only path, with content old.
func checkUntouched(t *testing.T, dir, path string, old []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the previous file is gone: %v", err)
	}
	if !bytes.Equal(got, old) {
		t.Fatalf("the previous file changed: %q, want %q", got, old)
	}
	if names := listDir(t, dir); len(names) != 1 || names[0] != filepath.Base(path) {
		t.Fatalf("folder holds %q, want only %q", names, filepath.Base(path))
	}
}

func writeBytes(b []byte) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	}
}

func TestWriteReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.bin")
	if err := Write(path, writeBytes([]byte("old"))); err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("0123456789"), bufferSize/5) // two buffers' worth
	if err := Write(path, writeBytes(big)); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("read back %d bytes (%v), want %d", len(got), err, len(big))
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != Mode {
		t.Errorf("mode %v, want %v", st.Mode().Perm(), Mode)
	}
	if names := listDir(t, dir); len(names) != 1 {
		t.Errorf("folder holds %q, want only f.bin", names)
	}
}

func TestWriteRelativePath(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := Write("rel.bin", writeBytes([]byte("x"))); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile("rel.bin"); err != nil || string(b) != "x" {
		t.Fatalf("read back %q, %v", b, err)
	}
}

func TestWriteFaults(t *testing.T) {
	big := bytes.Repeat([]byte{7}, 3*bufferSize)
	for _, tc := range []struct {
		name    string
		fault   faultyFile
		payload []byte
		want    []string // in the error message
		errno   error
	}{
		{"ENOSPC in the first buffer", faultyFile{failAfter: 0}, []byte("new content"), []string{"writing", "no space left"}, syscall.ENOSPC},
		{"ENOSPC after 1.5 MB", faultyFile{failAfter: bufferSize * 3 / 2}, big, []string{"writing", "no space left"}, syscall.ENOSPC},
		{"sync fails", faultyFile{failAfter: -1, failSync: true}, []byte("new"), []string{"sync", "input/output error"}, syscall.EIO},
		{"close fails (quota)", faultyFile{failAfter: -1, failClose: true}, []byte("new"), []string{"close", "quota"}, syscall.EDQUOT},
		{"chmod fails", faultyFile{failAfter: -1, failChmod: true}, []byte("new"), []string{"chmod"}, syscall.EPERM},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "ckpt.safetensors")
			old := []byte("the previous checkpoint")
			if err := os.WriteFile(path, old, 0o644); err != nil {
				t.Fatal(err)
			}
			inject(t, tc.fault)
			err := Write(path, writeBytes(tc.payload))
			if err == nil {
				t.Fatal("no error")
			}
			for _, s := range append(tc.want, path) {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
			if !errors.Is(err, tc.errno) {
				t.Errorf("error %v is not %v", err, tc.errno)
			}
			checkUntouched(t, dir, path, old)
		})
	}
}

func TestWriteCallbackError(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x")
	old := []byte("old")
	if err := os.WriteFile(path, old, 0o644); err != nil {
		t.Fatal(err)
	}
	err := Write(path, func(w io.Writer) error {
		w.Write([]byte("partial"))
		return errInjected
	})
	if err != errInjected {
		t.Fatalf("got %v, want the callback's own error", err)
	}
	checkUntouched(t, dir, path, old)

	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Fatalf("recovered %v, want the callback's panic", r)
			}
		}()
		Write(path, func(w io.Writer) error {
			w.Write([]byte("partial"))
			panic("boom")
		})
	}()
	checkUntouched(t, dir, path, old)
}

func TestWriteMissingFolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "such", "x")
	err := Write(path, writeBytes(nil))
	var e *Error
	if !errors.As(err, &e) || e.Op != "create temporary file" || !strings.Contains(err.Error(), path) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("got %v, want an *Error creating the temporary file naming %s", err, path)
	}
	if err := Write(t.TempDir()+"/", writeBytes(nil)); err == nil || !strings.Contains(err.Error(), "folder") {
		t.Fatalf("a folder path: got %v", err)
	}
}

func TestWriteOverFolder(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub")
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(path, "keep"), []byte("k"), 0o644)
	err := Write(path, writeBytes([]byte("x")))
	var e *Error
	if !errors.As(err, &e) || e.Op != "rename" {
		t.Fatalf("got %v, want a rename failure", err)
	}
	if names := listDir(t, dir); len(names) != 1 || names[0] != "sub" {
		t.Fatalf("folder holds %q, want only sub", names)
	}
}

func TestWriteSyncDirFails(t *testing.T) {
	orig := syncDir
	t.Cleanup(func() { syncDir = orig })
	syncDir = func(string) error { return syscall.EIO }
	dir := t.TempDir()
	path := filepath.Join(dir, "x")
	err := Write(path, writeBytes([]byte("new")))
	if err == nil || !strings.Contains(err.Error(), "may not survive a crash") {
		t.Fatalf("got %v", err)
	}
	// The rename happened: the new content is in place, nothing else.
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Fatalf("content %q", b)
	}
	if names := listDir(t, dir); len(names) != 1 {
		t.Fatalf("folder holds %q", names)
	}
}

func TestIsTemp(t *testing.T) {
	dir := t.TempDir()
	var seen string
	orig := createTemp
	t.Cleanup(func() { createTemp = orig })
	createTemp = func(d, pattern string) (tempFile, error) {
		f, err := orig(d, pattern)
		if err == nil {
			seen = filepath.Base(f.Name())
		}
		return f, err
	}
	if err := Write(filepath.Join(dir, "last.safetensors"), writeBytes(nil)); err != nil {
		t.Fatal(err)
	}
	if !IsTemp(seen) || !strings.HasPrefix(seen, ".last.safetensors.tmp-") {
		t.Errorf("temporary file %q", seen)
	}
	for _, name := range []string{"last.safetensors", ".hidden", "x.tmp-1"} {
		if IsTemp(name) {
			t.Errorf("IsTemp(%q) = true", name)
		}
	}
}

func TestWriteReplacesSymlink(t *testing.T) {
	dir := t.TempDir()
	target, link := filepath.Join(dir, "target"), filepath.Join(dir, "link")
	if err := os.WriteFile(target, []byte("target"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("no symbolic links: %v", err)
	}
	if err := Write(link, writeBytes([]byte("new"))); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || !st.Mode().IsRegular() {
		t.Fatalf("link is now %v, %v; want a regular file", st.Mode(), err)
	}
	if b, _ := os.ReadFile(target); string(b) != "target" {
		t.Fatalf("the link's target changed to %q", b)
	}
}
