package train

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Field is one named value of a metrics record.
type Field struct {
	Name  string
	Value float64
}

// MetricsLog appends records to NAME.jsonl and NAME.csv in a run folder. The
// CSV header is the first record's field names; later records must have the
// same fields in the same order.
type MetricsLog struct {
	jsonl, csv *os.File
	columns    []string
}

// OpenMetrics opens (creating or appending to) dir/name.jsonl and dir/name.csv.
// When resuming, keepUpToStep drops records whose "step" is larger, so a
// resumed run continues the curve without repeats; pass -1 to start afresh.
func OpenMetrics(dir, name string, keepUpToStep int) (*MetricsLog, error) {
	jp, cp := filepath.Join(dir, name+".jsonl"), filepath.Join(dir, name+".csv")
	if keepUpToStep < 0 {
		for _, p := range []string{jp, cp} {
			if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
				return nil, err
			}
		}
	} else if err := truncateMetrics(jp, cp, keepUpToStep); err != nil {
		return nil, err
	}
	m := &MetricsLog{}
	var err error
	if m.jsonl, err = os.OpenFile(jp, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err != nil {
		return nil, err
	}
	if m.csv, err = os.OpenFile(cp, os.O_CREATE|os.O_APPEND|os.O_RDWR, 0o644); err != nil {
		m.jsonl.Close()
		return nil, err
	}
	if head, err := os.ReadFile(cp); err == nil && len(head) > 0 {
		first, _, _ := bytes.Cut(head, []byte("\n"))
		m.columns = strings.Split(string(first), ",")
	}
	return m, nil
}

// Write appends one record to both files.
func (m *MetricsLog) Write(rec []Field) error {
	if m.columns == nil {
		for _, f := range rec {
			m.columns = append(m.columns, f.Name)
		}
		if _, err := fmt.Fprintln(m.csv, strings.Join(m.columns, ",")); err != nil {
			return err
		}
	}
	if len(rec) != len(m.columns) {
		return fmt.Errorf("metrics: record has %d fields, the log has %d columns", len(rec), len(m.columns))
	}
	var js, cs bytes.Buffer
	js.WriteByte('{')
	for i, f := range rec {
		if f.Name != m.columns[i] {
			return fmt.Errorf("metrics: field %d is %q, column is %q", i, f.Name, m.columns[i])
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
		return err
	}
	_, err := m.csv.Write(cs.Bytes())
	return err
}

// Close flushes and closes both files.
func (m *MetricsLog) Close() error {
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

// ReadMetrics reads dir/name.jsonl back as records of name → value.
func ReadMetrics(dir, name string) ([]map[string]float64, error) {
	f, err := os.Open(filepath.Join(dir, name+".jsonl"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []map[string]float64
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for line := 1; sc.Scan(); line++ {
		var rec map[string]*float64
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", f.Name(), line, err)
		}
		r := make(map[string]float64, len(rec))
		for k, v := range rec {
			if v == nil {
				r[k] = math.NaN()
			} else {
				r[k] = *v
			}
		}
		out = append(out, r)
	}
	return out, sc.Err()
}

// truncateMetrics rewrites both files keeping the records with step ≤ maxStep.
func truncateMetrics(jsonlPath, csvPath string, maxStep int) error {
	keep := func(path string, stepOf func(line string, header []string) (int, bool), hasHeader bool) error {
		raw, err := os.ReadFile(path)
		if os.IsNotExist(err) {
			return nil
		} else if err != nil {
			return err
		}
		lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
		var out []string
		var header []string
		for i, l := range lines {
			if l == "" {
				continue
			}
			if hasHeader && i == 0 {
				header = strings.Split(l, ",")
				out = append(out, l)
				continue
			}
			if s, ok := stepOf(l, header); ok && s > maxStep {
				continue
			}
			out = append(out, l)
		}
		return os.WriteFile(path, []byte(strings.Join(out, "\n")+"\n"), 0o644)
	}
	jsonStep := func(l string, _ []string) (int, bool) {
		var rec map[string]*float64
		if json.Unmarshal([]byte(l), &rec) != nil || rec["step"] == nil {
			return 0, false
		}
		return int(*rec["step"]), true
	}
	csvStep := func(l string, header []string) (int, bool) {
		cells := strings.Split(l, ",")
		for i, h := range header {
			if h == "step" && i < len(cells) {
				v, err := strconv.ParseFloat(cells[i], 64)
				return int(v), err == nil
			}
		}
		return 0, false
	}
	if err := keep(jsonlPath, jsonStep, false); err != nil {
		return err
	}
	return keep(csvPath, csvStep, true)
}
