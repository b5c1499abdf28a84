// Package atomicfile replaces files atomically: a reader, or the file
// system after a crash or power loss, finds either the old content whole or
// the new content whole, never a mixture or a truncated file, and a failed
// write (a full disk, an exceeded quota, a read-only folder) leaves the old
// file as it was and no temporary file behind.
//
// It is the one implementation behind every file vit-train rewrites in
// place: checkpoints and exported weights (formats/safetensors), .npy arrays
// (formats/npy) and pictures (viz).
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Mode is the permission of every file Write creates.
const Mode os.FileMode = 0o644

// bufferSize is the write buffer in front of the temporary file.
const bufferSize = 1 << 20

// TempPrefix and TempInfix make up the names of temporary files: the
// temporary file for "dir/name" is "dir/" + TempPrefix + "name" + TempInfix
// + random digits. It is hidden (a leading dot) so that folder scans skip
// it.
const (
	TempPrefix = "."
	TempInfix  = ".tmp-"
)

// tempFile is what Write needs of the temporary file; tests substitute
// files that fail.
type tempFile interface {
	io.Writer
	Name() string
	Chmod(os.FileMode) error
	Sync() error
	Close() error
}

// createTemp and syncDir are the file system operations Write uses,
// variables so that tests can inject faults.
var (
	createTemp = func(dir, pattern string) (tempFile, error) {
		f, err := os.CreateTemp(dir, pattern)
		if err != nil {
			return nil, err
		}
		return f, nil
	}
	syncDir = syncDirectory
)

// Error is a failure of one step of Write other than the caller's write
// function: it names the destination and the step.
type Error struct {
	Path string // the destination file
	Op   string // "create temporary file", "write", "sync", "close", "chmod", "rename" or "sync directory"
	Err  error
}

func (e *Error) Error() string {
	switch e.Op {
	case "write":
		return fmt.Sprintf("writing %s: %v", e.Path, e.Err)
	case "rename":
		return fmt.Sprintf("replacing %s: %v", e.Path, e.Err)
	case "sync directory":
		return fmt.Sprintf("%s was replaced, but syncing its folder failed, so the change may not survive a crash: %v", e.Path, e.Err)
	}
	return fmt.Sprintf("writing %s: %s: %v", e.Path, e.Op, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Write creates or replaces the file at path with what write writes to w.
//
// The bytes go, through a buffer, to a temporary file in path's folder
// (so that the final rename stays on one file system); then Write flushes
// the buffer, gives the file Mode, fsyncs and closes it, renames it over
// path and fsyncs the folder so that the rename is durable.
//
// If write returns an error, or any step fails — ENOSPC, EDQUOT, EROFS, a
// missing folder, a panic inside write — the temporary file is removed and
// path is untouched. A failure to write to the file is an *Error naming
// path (w returns it, and write should return it, perhaps wrapped); so is a
// failure of any later step. write's other errors are returned as they
// are. Only after a successful rename can an error (from syncing the
// folder) leave the new content in place.
//
// A symbolic link at path is replaced by the new file, not followed. A
// process killed while writing leaves its temporary file (see IsTemp),
// which is never mistaken for path.
func Write(path string, write func(w io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if base == "" {
		return &Error{Path: path, Op: "create temporary file", Err: errors.New("the path names a folder, not a file")}
	}
	f, err := createTemp(dir, TempPrefix+base+TempInfix+"*")
	if err != nil {
		return &Error{Path: path, Op: "create temporary file", Err: err}
	}
	tmp := f.Name()
	closed, renamed := false, false
	defer func() {
		// Runs on errors and on a panic in write alike.
		if !renamed {
			if !closed {
				f.Close()
			}
			os.Remove(tmp)
		}
	}()
	fw := &fileWriter{f: f, path: path, tmp: tmp}
	bw := bufio.NewWriterSize(fw, bufferSize)
	if err := write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := f.Chmod(Mode); err != nil {
		return &Error{Path: path, Op: "chmod", Err: err}
	}
	if err := f.Sync(); err != nil {
		return &Error{Path: path, Op: "sync", Err: err}
	}
	closed = true
	if err := f.Close(); err != nil {
		return &Error{Path: path, Op: "close", Err: err}
	}
	if err := os.Rename(tmp, path); err != nil {
		return &Error{Path: path, Op: "rename", Err: err}
	}
	renamed = true
	if err := syncDir(dir); err != nil {
		return &Error{Path: path, Op: "sync directory", Err: err}
	}
	return nil
}

// fileWriter writes to the temporary file and reports a failure as an
// *Error naming the destination rather than the temporary file.
type fileWriter struct {
	f         tempFile
	path, tmp string
}

func (w *fileWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) && pe.Path == w.tmp {
			err = pe.Err
		}
		return n, &Error{Path: w.path, Op: "write", Err: err}
	}
	return n, nil
}

// syncDirectory fsyncs a folder so that a rename in it is durable. File
// systems that cannot sync a folder (EINVAL) are not an error.
func syncDirectory(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}

// IsTemp reports whether name (a base name, without folder) is one of
// Write's temporary files.
func IsTemp(name string) bool {
	return strings.HasPrefix(name, TempPrefix) && strings.Contains(name, TempInfix)
}
