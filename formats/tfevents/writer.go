package tfevents

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// FilePrefix begins the name of every event file; TensorBoard reads the
// files of a folder whose names contain "tfevents", in name order.
const FilePrefix = "events.out.tfevents."

// fileSuffix ends the names of the files Create makes.
const fileSuffix = ".vit-train"

// Writer appends events to a new event file. Each event is one write(2)
// of one record, so a process killed at any moment leaves whole records
// and at most one partial last record.
type Writer struct {
	f   *os.File
	buf []byte
}

// NextPath is the path of a new event file in dir, whose event files are
// files (as Files lists them): dir/events.out.tfevents.SECONDS.vit-train,
// where SECONDS is now's Unix time, or one more than the latest time in the
// names of files when that is not earlier. The new file sorts after every
// file listed, so TensorBoard reads it last, and its name is none of
// theirs, even for a file removed since the listing.
func NextPath(dir string, files []string, now time.Time) string {
	sec := now.Unix()
	for _, name := range files {
		if s, ok := nameSeconds(filepath.Base(name)); ok && s >= sec {
			sec = s + 1
		}
	}
	return filepath.Join(dir, fmt.Sprintf("%s%010d%s", FilePrefix, sec, fileSuffix))
}

// Create makes the event file path, which must not exist, and writes its
// file-version event with the wall time now.
func Create(path string, now time.Time) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("tfevents: %w", err)
	}
	w := &Writer{f: f}
	if err := w.Write(Event{WallTime: wallTime(now), FileVersion: FileVersion}); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// nameSeconds reads the Unix time of an event file's name
// (events.out.tfevents.SECONDS[.anything]).
func nameSeconds(name string) (int64, bool) {
	rest, ok := strings.CutPrefix(name, FilePrefix)
	if !ok {
		return 0, false
	}
	digits, _, _ := strings.Cut(rest, ".")
	s, err := strconv.ParseInt(digits, 10, 64)
	return s, err == nil
}

// wallTime is t in seconds since the Unix epoch.
func wallTime(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// Write appends e as one record; a zero WallTime is set to the current
// time. A failed write is an error naming the file.
func (w *Writer) Write(e Event) error {
	if e.WallTime == 0 {
		e.WallTime = wallTime(time.Now())
	}
	data, err := e.Marshal()
	if err != nil {
		return fmt.Errorf("%s: %w", w.f.Name(), err)
	}
	w.buf = AppendRecord(w.buf[:0], data)
	if _, err := w.f.Write(w.buf); err != nil {
		return fmt.Errorf("tfevents: %w", err)
	}
	return nil
}

// Sync commits the file to stable storage.
func (w *Writer) Sync() error {
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("tfevents: syncing %s: %w", w.f.Name(), err)
	}
	return nil
}

// Close closes the file.
func (w *Writer) Close() error { return w.f.Close() }
