// Package metrics is a run's metrics logs: NAME.jsonl and NAME.csv in a
// run folder, one record per line, appended as a run goes, cut back to a
// resumed run's position and repaired after a kill mid-write.
package metrics

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/vit-train/vit-train/formats/atomicfile"
)

// Field is one named value of a metrics record.
type Field struct {
	Name  string
	Value float64
}

// Log appends records to NAME.jsonl and NAME.csv in a run folder. The
// CSV header is the first record's field names; later records must have the
// same fields in the same order. Each record is one line, written by one
// call per file; a run killed in the middle of a Write leaves at most a
// partial last line, which the next Open drops.
type Log struct {
	jsonl, csv *os.File
	columns    []string
	// Notes says what opening the log repaired, one sentence per repair: a
	// partial last line or a partial or empty CSV header dropped (left by a
	// run killed while writing it). The trainer prints them.
	Notes []string
}

// Keep selects the records a resumed log keeps: those whose field Field is
// at most Max (e.g. "step" ≤ the checkpoint's step).
type Keep struct {
	Field string
	Max   float64
}

// Open opens dir/name.jsonl and dir/name.csv for appending. With
// keep nil both files start afresh. Otherwise (resuming) each file keeps
// its records selected by keep, so that a resumed run continues the curve
// without repeats; a file that changes is replaced atomically (a temporary
// file, synced and renamed). A partial last line and a partial or empty CSV
// header are dropped and described in Notes; any other line that cannot be
// read is an error naming the file and the line.
func Open(dir, name string, keep *Keep) (*Log, error) {
	jp, cp := filepath.Join(dir, name+".jsonl"), filepath.Join(dir, name+".csv")
	m := &Log{}
	if keep == nil {
		for _, p := range []string{jp, cp} {
			if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
				return nil, fmt.Errorf("metrics: %w", err)
			}
		}
	} else {
		notes, err := truncateJSONL(jp, *keep)
		if err != nil {
			return nil, err
		}
		m.Notes = append(m.Notes, notes...)
		if m.columns, notes, err = truncateCSV(cp, *keep); err != nil {
			return nil, err
		}
		m.Notes = append(m.Notes, notes...)
	}
	var err error
	if m.jsonl, err = os.OpenFile(jp, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	if m.csv, err = os.OpenFile(cp, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err != nil {
		m.jsonl.Close()
		return nil, fmt.Errorf("metrics: %w", err)
	}
	return m, nil
}

// Write appends one record to both files. A failed write (a full disk, say)
// is an error naming the file.
func (m *Log) Write(rec []Field) error {
	if m.columns == nil {
		columns := make([]string, len(rec))
		for i, f := range rec {
			columns[i] = f.Name
		}
		if _, err := io.WriteString(m.csv, strings.Join(columns, ",")+"\n"); err != nil {
			return fmt.Errorf("metrics: %w", err)
		}
		m.columns = columns
	}
	if len(rec) != len(m.columns) {
		return fmt.Errorf("metrics: %s: a record has %d fields, the log has %d columns (%s)", m.csv.Name(), len(rec), len(m.columns), strings.Join(m.columns, ","))
	}
	var js, cs bytes.Buffer
	js.WriteByte('{')
	for i, f := range rec {
		if f.Name != m.columns[i] {
			return fmt.Errorf("metrics: %s: field %d is %q, the column is %q", m.csv.Name(), i, f.Name, m.columns[i])
		}
		if i > 0 {
			js.WriteByte(',')
			cs.WriteByte(',')
		}
		v := formatFloat(f.Value)
		fmt.Fprintf(&js, "%q:%s", f.Name, jsonNumber(v))
		cs.WriteString(v)
	}
	js.WriteString("}\n")
	cs.WriteByte('\n')
	if _, err := m.jsonl.Write(js.Bytes()); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	if _, err := m.csv.Write(cs.Bytes()); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	return nil
}

// Sync commits both files to stable storage, so that a checkpoint saved
// afterwards never points past the records on disk.
func (m *Log) Sync() error {
	for _, f := range []*os.File{m.jsonl, m.csv} {
		if err := f.Sync(); err != nil {
			return fmt.Errorf("metrics: syncing %s: %w", f.Name(), err)
		}
	}
	return nil
}

// Close closes both files.
func (m *Log) Close() error {
	err1 := m.jsonl.Close()
	err2 := m.csv.Close()
	if err1 != nil {
		return err1
	}
	return err2
}

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// jsonNumber maps NaN and ±Inf, which JSON lacks, to null.
func jsonNumber(s string) string {
	switch s {
	case "NaN", "+Inf", "-Inf":
		return "null"
	}
	return s
}

// Read reads dir/name.jsonl back as records of name → value (NaN for
// null). Empty lines and a partial last line (no newline: a run killed
// while writing it) are skipped.
func Read(dir, name string) ([]map[string]float64, error) {
	path := filepath.Join(dir, name+".jsonl")
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines, _ := splitLines(raw)
	var out []map[string]float64
	for i, l := range lines {
		if l == "" {
			continue
		}
		r, err := parseJSONRecord(l)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, i+1, err)
		}
		out = append(out, r)
	}
	return out, nil
}

func parseJSONRecord(line string) (map[string]float64, error) {
	var rec map[string]*float64
	if err := json.Unmarshal([]byte(line), &rec); err != nil {
		return nil, err
	}
	r := make(map[string]float64, len(rec))
	for k, v := range rec {
		if v == nil {
			r[k] = math.NaN()
		} else {
			r[k] = *v
		}
	}
	return r, nil
}

// splitLines returns the complete lines of raw (without their newlines)
// and the partial line after the last newline ("" when raw ends with one).
func splitLines(raw []byte) (lines []string, partial string) {
	s := string(raw)
	end := strings.LastIndexByte(s, '\n')
	partial = s[end+1:]
	if end < 0 {
		return nil, partial
	}
	return strings.Split(s[:end], "\n"), partial
}

// partialNote describes a dropped partial last line.
func partialNote(path, partial string) string {
	const show = 40
	q := partial
	if len(q) > show {
		q = q[:show] + "…"
	}
	return fmt.Sprintf("%s: dropped a partial last line %q (%d bytes without a newline: the run stopped while writing it)", path, q, len(partial))
}

// rewrite replaces path with lines atomically.
func rewrite(path string, lines []string) error {
	err := atomicfile.Write(path, func(w io.Writer) error {
		for _, l := range lines {
			if _, err := io.WriteString(w, l+"\n"); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	return nil
}

// readLog reads a log file; a missing file has no lines.
func readLog(path string) (lines []string, partial string, exists bool, err error) {
	raw, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, "", false, nil
	}
	if err != nil {
		return nil, "", false, fmt.Errorf("metrics: %w", err)
	}
	lines, partial = splitLines(raw)
	return lines, partial, true, nil
}

// truncateJSONL keeps the records of the .jsonl at path that keep selects,
// dropping empty lines and a partial last line.
func truncateJSONL(path string, keep Keep) (notes []string, err error) {
	lines, partial, exists, err := readLog(path)
	if !exists || err != nil {
		return nil, err
	}
	changed := partial != ""
	if changed {
		notes = append(notes, partialNote(path, partial))
	}
	out := lines[:0:0]
	for i, l := range lines {
		if l == "" {
			changed = true
			continue
		}
		rec, err := parseJSONRecord(l)
		if err != nil {
			return nil, fmt.Errorf("metrics: %s line %d: %w", path, i+1, err)
		}
		v, ok := rec[keep.Field]
		if !ok || math.IsNaN(v) {
			return nil, fmt.Errorf("metrics: %s line %d: no %q value", path, i+1, keep.Field)
		}
		if v > keep.Max {
			changed = true
			continue
		}
		out = append(out, l)
	}
	if !changed {
		return notes, nil
	}
	return notes, rewrite(path, out)
}

// truncateCSV keeps the header and the rows of the .csv at path that keep
// selects. A partial or empty header is dropped (with the file's content:
// rows cannot follow it), as is a partial last row. It returns the header's
// columns, nil when the file has none.
func truncateCSV(path string, keep Keep) (columns, notes []string, err error) {
	lines, partial, exists, err := readLog(path)
	if !exists || err != nil {
		return nil, nil, err
	}
	if len(lines) == 0 || lines[0] == "" {
		if len(lines) > 1 {
			return nil, nil, fmt.Errorf("metrics: %s: the header line is empty but %d lines follow it", path, len(lines)-1)
		}
		switch {
		case len(lines) == 1:
			notes = append(notes, fmt.Sprintf("%s: dropped an empty header line", path))
		case partial != "":
			notes = append(notes, fmt.Sprintf("%s: dropped a partial header %q (no newline: the run stopped while writing it)", path, partial))
		default:
			return nil, nil, nil // an empty file
		}
		return nil, notes, rewrite(path, nil)
	}
	columns = strings.Split(lines[0], ",")
	col := -1
	for i, c := range columns {
		if c == keep.Field {
			col = i
		}
	}
	if col < 0 {
		return nil, nil, fmt.Errorf("metrics: %s: the header %q has no %q column", path, lines[0], keep.Field)
	}
	changed := partial != ""
	if changed {
		notes = append(notes, partialNote(path, partial))
	}
	out := []string{lines[0]}
	for i, l := range lines[1:] {
		cells := strings.Split(l, ",")
		if len(cells) != len(columns) {
			return nil, nil, fmt.Errorf("metrics: %s line %d: %d cells, the header has %d columns", path, i+2, len(cells), len(columns))
		}
		v, err := strconv.ParseFloat(cells[col], 64)
		if err != nil {
			return nil, nil, fmt.Errorf("metrics: %s line %d: column %q: %w", path, i+2, keep.Field, err)
		}
		if v > keep.Max {
			changed = true
			continue
		}
		out = append(out, l)
	}
	if !changed {
		return columns, notes, nil
	}
	return columns, notes, rewrite(path, out)
}
