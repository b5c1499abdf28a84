package data

import (
	"fmt"
	"strings"
)

// cifarPixels is the size of one CIFAR image: 3 planes of 32x32 bytes, red,
// green then blue, each row-major.
const cifarPixels = 3 * 32 * 32

// cifarSpec describes one CIFAR variant's archive layout.
type cifarSpec struct {
	name       string         // for messages
	dir        string         // folder inside the archive
	files      [2][]string    // data files of Train and Test
	records    map[string]int // records per data file
	labelBytes int            // label bytes before each image
	labelIndex int            // which label byte is the label
	classes    int            // number of classes
	meta       string         // class names file, one per line
}

func (s *cifarSpec) recordSize() int { return s.labelBytes + cifarPixels }

// cifar10Spec is the layout of cifar-10-binary.tar.gz.
var cifar10Spec = cifarSpec{
	name: "CIFAR-10",
	dir:  "cifar-10-batches-bin",
	files: [2][]string{
		{"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin", "data_batch_5.bin"},
		{"test_batch.bin"},
	},
	records: map[string]int{
		"data_batch_1.bin": 10000, "data_batch_2.bin": 10000, "data_batch_3.bin": 10000,
		"data_batch_4.bin": 10000, "data_batch_5.bin": 10000, "test_batch.bin": 10000,
	},
	labelBytes: 1, labelIndex: 0, classes: 10, meta: "batches.meta.txt",
}

// cifar100Spec returns the layout of cifar-100-binary.tar.gz; records carry
// a coarse then a fine label byte.
func cifar100Spec(coarse bool) cifarSpec {
	s := cifarSpec{
		name:       "CIFAR-100",
		dir:        "cifar-100-binary",
		files:      [2][]string{{"train.bin"}, {"test.bin"}},
		records:    map[string]int{"train.bin": 50000, "test.bin": 10000},
		labelBytes: 2, labelIndex: 1, classes: 100, meta: "fine_label_names.txt",
	}
	if coarse {
		s.labelIndex, s.classes, s.meta = 0, 20, "coarse_label_names.txt"
	}
	return s
}

// OpenCIFAR10 reads a CIFAR-10 split in the official binary format
// (data_batch_1.bin … data_batch_5.bin or test_batch.bin, 10,000 records of
// 1 label byte and 3072 pixel bytes each, class names from batches.meta.txt).
// path is cifar-10-binary.tar.gz, the extracted cifar-10-batches-bin folder,
// or the folder holding it. Images are (3, 32, 32).
func OpenCIFAR10(path string, split Split) (*Memory, error) {
	return openCIFAR(path, &cifar10Spec, split)
}

// OpenCIFAR100 reads a CIFAR-100 split in the official binary format
// (train.bin with 50,000 or test.bin with 10,000 records of a coarse label
// byte, a fine label byte and 3072 pixel bytes). Labels are the 100 fine
// classes (fine_label_names.txt), or the 20 coarse ones
// (coarse_label_names.txt) when coarse is set. path is
// cifar-100-binary.tar.gz, the extracted cifar-100-binary folder, or the
// folder holding it.
func OpenCIFAR100(path string, split Split, coarse bool) (*Memory, error) {
	s := cifar100Spec(coarse)
	return openCIFAR(path, &s, split)
}

func openCIFAR(path string, spec *cifarSpec, split Split) (*Memory, error) {
	if err := split.check(); err != nil {
		return nil, err
	}
	names := append([]string{spec.meta}, spec.files[split]...)
	limits := make(map[string]int64, len(names))
	limits[spec.meta] = 1 << 20
	for _, f := range spec.files[split] {
		limits[f] = int64(spec.records[f] * spec.recordSize())
	}
	files, err := readCIFARFiles(path, spec.dir, limits)
	if err != nil {
		return nil, err
	}
	classes, err := parseClassNames(files[spec.meta].data, files[spec.meta].path, spec.classes)
	if err != nil {
		return nil, err
	}
	total := 0
	for _, f := range spec.files[split] {
		total += spec.records[f]
	}
	m := &Memory{
		Name: fmt.Sprintf("%s %s (%s)", spec.name, split, path), C: 3, H: 32, W: 32,
		Pix: make([]uint8, 0, total*cifarPixels), Labels: make([]int, 0, total), ClassNames: classes,
	}
	for _, f := range spec.files[split] {
		if err := parseCIFARRecords(files[f].data, files[f].path, spec, spec.records[f], m); err != nil {
			return nil, err
		}
	}
	m.N = len(m.Labels)
	return newMemory(m)
}

// parseCIFARRecords checks that data holds exactly want records and appends
// their pixels and labels to m.
func parseCIFARRecords(data []byte, name string, spec *cifarSpec, want int, m *Memory) error {
	rs := spec.recordSize()
	if len(data)%rs != 0 {
		n := len(data) / rs
		return fmt.Errorf("data: %s: truncated: %d bytes is not a whole number of %d-byte records; record %d is cut at offset %d", name, len(data), rs, n, len(data))
	}
	if n := len(data) / rs; n != want {
		what := "truncated"
		if n > want {
			what = "oversize"
		}
		return fmt.Errorf("data: %s: %s: %d records (%d bytes), want %d", name, what, n, len(data), want)
	}
	for r := 0; r < want; r++ {
		rec := data[r*rs : (r+1)*rs]
		for k := 0; k < spec.labelBytes; k++ {
			limit := spec.classes
			if spec.labelBytes == 2 {
				limit = [2]int{20, 100}[k]
			}
			if int(rec[k]) >= limit {
				return fmt.Errorf("data: %s: record %d (offset %d): label byte %d = %d outside [0, %d)", name, r, r*rs+k, k, rec[k], limit)
			}
		}
		m.Labels = append(m.Labels, int(rec[spec.labelIndex]))
		m.Pix = append(m.Pix, rec[spec.labelBytes:]...)
	}
	return nil
}

// parseClassNames reads one class name per line, ignoring blank lines, and
// requires exactly want names.
func parseClassNames(data []byte, name string, want int) ([]string, error) {
	var names []string
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			names = append(names, line)
		}
	}
	if len(names) != want {
		return nil, fmt.Errorf("data: %s: %d class names, want %d", name, len(names), want)
	}
	return names, nil
}
