package tfevents

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vit-train/vit-train/formats/atomicfile"
)

// Files lists the event files of dir (names beginning with FilePrefix) in
// name order, the order TensorBoard reads them in.
func Files(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("tfevents: %w", err)
	}
	var out []string
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasPrefix(e.Name(), FilePrefix) {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	slices.Sort(out)
	return out, nil
}

// File is an event file's content.
type File struct {
	Records []Record
	Events  []Event // decoded from Records, one each
	// Partial is the offset of a partial last record (the writer stopped
	// while writing it), -1 when the file ends after a whole record.
	Partial int64
	Size    int64 // of the file, in bytes
}

// Parse decodes the content of an event file. Its first record must be
// the file-version event; an empty content has no records. Errors name
// the record's offset.
func Parse(b []byte) (*File, error) {
	records, partial, err := SplitRecords(b)
	if err != nil {
		return nil, err
	}
	f := &File{Records: records, Partial: partial, Size: int64(len(b))}
	for i, r := range records {
		e, err := UnmarshalEvent(r.Data)
		if err != nil {
			return nil, fmt.Errorf("record at offset %d: %w", r.Offset, err)
		}
		if i == 0 && e.FileVersion != FileVersion {
			return nil, fmt.Errorf("record at offset 0: the first event's file_version is %q, want %q", e.FileVersion, FileVersion)
		}
		f.Events = append(f.Events, e)
	}
	return f, nil
}

// ReadFile reads and decodes the event file at path; errors name it.
func ReadFile(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tfevents: %w", err)
	}
	f, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("tfevents: %s: %w", path, err)
	}
	return f, nil
}

// Filter keeps the events of the event file at path that keep accepts,
// with the file-version event, and drops a partial last record; a file
// that changes is replaced atomically (formats/atomicfile), and one left
// without any event but its file version is removed. It returns a note
// for a dropped partial record.
func Filter(path string, keep func(Event) bool) (notes []string, err error) {
	f, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	if f.Partial >= 0 {
		notes = append(notes, fmt.Sprintf("%s: dropped a partial last record at offset %d (%d bytes: the run stopped while writing it)", path, f.Partial, f.Size-f.Partial))
	}
	var kept []Record
	summaries := 0
	for i, e := range f.Events {
		if i == 0 || keep(e) {
			kept = append(kept, f.Records[i])
			if i > 0 {
				summaries++
			}
		}
	}
	if summaries == 0 {
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("tfevents: %w", err)
		}
		return notes, nil
	}
	if len(kept) == len(f.Records) && f.Partial < 0 {
		return notes, nil
	}
	err = atomicfile.Write(path, func(w io.Writer) error {
		for _, r := range kept {
			if _, err := w.Write(AppendRecord(nil, r.Data)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("tfevents: %w", err)
	}
	return notes, nil
}
