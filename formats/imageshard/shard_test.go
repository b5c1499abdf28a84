package imageshard

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vit-train/vit-train/formats/atomicfile"
	"github.com/vit-train/vit-train/internal/tmpfs"
)

// item is one image of a test file.
type item struct {
	data        []byte
	label, h, w int
	enc         Encoding
}

func testMeta() Meta {
	return Meta{Source: "imagefolder", Split: "train", Channels: 1, Classes: []string{"a", "b"}, MaxSide: 8, Quality: 90}
}

func testItems() []item {
	return []item{
		{[]byte{1, 2, 3, 4, 5, 6}, 1, 2, 3, Raw},
		{[]byte("not really a JPEG"), 0, 8, 5, JPEG},
		{bytes.Repeat([]byte{7}, 64), 1, 8, 8, Raw},
	}
}

// encode writes items to a file in memory.
func encode(t testing.TB, meta Meta, items []item) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, meta)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if err := w.Add(it.data, it.label, it.h, it.w, it.enc); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestRoundTrip(t *testing.T) {
	items := testItems()
	path := filepath.Join(t.TempDir(), "train.shard")
	err := WriteFile(path, testMeta(), func(w *Writer) error {
		for _, it := range items {
			if err := w.Add(it.data, it.label, it.h, it.w, it.enc); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Len() != len(items) {
		t.Fatalf("Len %d, want %d", r.Len(), len(items))
	}
	m := r.Meta()
	if m.Source != "imagefolder" || m.Split != "train" || m.Channels != 1 || strings.Join(m.Classes, ",") != "a,b" || m.MaxSide != 8 || m.Quality != 90 {
		t.Errorf("meta %+v", m)
	}
	// Backwards, as a shuffled reader would ask for them.
	var buf []byte
	for i := len(items) - 1; i >= 0; i-- {
		it := items[i]
		rec := r.Record(i)
		if rec.Label != it.label || rec.Height != it.h || rec.Width != it.w || rec.Encoding != it.enc || rec.Length != len(it.data) {
			t.Errorf("item %d: record %+v, want %+v", i, rec, it)
		}
		if buf, err = r.Read(i, buf); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf, it.data) {
			t.Errorf("item %d: bytes %q, want %q", i, buf, it.data)
		}
	}
	if _, err := r.Read(3, nil); err == nil || !strings.Contains(err.Error(), "item 3 outside [0, 3)") {
		t.Errorf("Read(3): %v", err)
	}
}

// A flipped byte in an item is reported when that item is read, naming the
// file and the item; the other items still read.
func TestBadItemCRC(t *testing.T) {
	b := encode(t, testMeta(), testItems())
	b[headerSize+6+3] ^= 0x10 // inside item 1
	r, err := NewReader(bytes.NewReader(b), int64(len(b)), "photos/train.shard")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Read(0, nil); err != nil {
		t.Errorf("item 0: %v", err)
	}
	_, err = r.Read(1, nil)
	if err == nil || !strings.Contains(err.Error(), "photos/train.shard: item 1: CRC-32C") {
		t.Errorf("item 1: %v, want a CRC-32C error naming the file and item 1", err)
	}
}

// Damage outside the items is found on opening.
func TestCorruptFiles(t *testing.T) {
	good := encode(t, testMeta(), testItems())
	indexOffset := int(binary.LittleEndian.Uint64(good[len(good)-trailerSize:]))
	cases := []struct {
		name   string
		mutate func([]byte) []byte
		want   string
	}{
		{"empty", func(b []byte) []byte { return nil }, "shorter than a header and a trailer"},
		{"magic", func(b []byte) []byte { b[0] = 'X'; return b }, "not a prepared data set"},
		{"version", func(b []byte) []byte { b[8] = 9; return b }, "version 9"},
		{"truncated", func(b []byte) []byte { return b[:len(b)-1] }, "truncated"},
		{"index byte", func(b []byte) []byte { b[indexOffset+12] ^= 1; return b }, "the file is corrupt"},
		{"count", func(b []byte) []byte { b[len(b)-trailerSize+8] = 200; return b }, "items do not fit"},
	}
	for _, c := range cases {
		b := c.mutate(bytes.Clone(good))
		_, err := NewReader(bytes.NewReader(b), int64(len(b)), "x.shard")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "x.shard") {
			t.Errorf("%s: %v, want an error naming x.shard with %q", c.name, err, c.want)
		}
	}
}

// Records that do not fit the meta are refused by the writer, with the
// item's index.
func TestWriterChecks(t *testing.T) {
	cases := []struct {
		it   item
		want string
	}{
		{item{[]byte{1, 2}, 0, 1, 1, Raw}, "a raw 1 × 1 × 1 image has 1 bytes"},
		{item{[]byte{1}, 2, 1, 1, Raw}, "label = 2"},
		{item{[]byte{1}, 0, 9, 1, JPEG}, "longer than max_side 8"},
		{item{[]byte{1}, 0, 1, 1, 7}, "encoding = 7"},
		{item{nil, 0, 1, 1, JPEG}, "length = 0"},
	}
	for _, c := range cases {
		w, err := NewWriter(&bytes.Buffer{}, testMeta())
		if err != nil {
			t.Fatal(err)
		}
		err = w.Add(c.it.data, c.it.label, c.it.h, c.it.w, c.it.enc)
		if err == nil || !strings.Contains(err.Error(), "item 0: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.it, err, c.want)
		}
	}
	if _, err := NewWriter(&bytes.Buffer{}, Meta{Channels: 2, Classes: []string{"a"}}); err == nil || !strings.Contains(err.Error(), "channels = 2") {
		t.Errorf("two channels: %v", err)
	}
}

// A failing add leaves the old file in place and no temporary file.
func TestWriteFileFailure(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "train.shard")
	old := []byte("old")
	if err := os.WriteFile(path, old, 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := WriteFile(path, testMeta(), func(w *Writer) error {
		if err := w.Add([]byte{1}, 0, 1, 1, Raw); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("%v, want boom", err)
	}
	checkOnly(t, dir, path, old)
}

// A full disk: the error is ENOSPC, the old file survives.
func TestWriteFileFullDisk(t *testing.T) {
	dir := tmpfs.Mount(t, "64k")
	path := filepath.Join(dir, "train.shard")
	old := []byte("old")
	if err := os.WriteFile(path, old, 0o644); err != nil {
		t.Fatal(err)
	}
	err := WriteFile(path, testMeta(), func(w *Writer) error {
		for range 4096 {
			if err := w.Add(bytes.Repeat([]byte{1}, 64), 0, 8, 8, Raw); err != nil {
				return err
			}
		}
		return nil
	})
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("%v, want ENOSPC", err)
	}
	checkOnly(t, dir, path, old)
}

// checkOnly checks that dir holds path alone, with content want.
func checkOnly(t *testing.T, dir, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("%s: %q, %v; want %q", path, got, err, want)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("%s holds %d entries, want 1", dir, len(entries))
	}
}

// killEnv makes the test binary write a file slowly, for
// TestWriteFileKilled to kill.
const killEnv = "IMAGESHARD_TEST_WRITE_SLOWLY"

// A process killed with SIGKILL while writing leaves no file under the
// name, only its temporary file, which atomicfile.IsTemp recognises.
func TestWriteFileKilled(t *testing.T) {
	if path := os.Getenv(killEnv); path != "" {
		meta := testMeta()
		meta.MaxSide = 0
		WriteFile(path, meta, func(w *Writer) error {
			for {
				if err := w.Add(bytes.Repeat([]byte{1}, 256*256), 0, 256, 256, Raw); err != nil {
					return err
				}
				time.Sleep(time.Millisecond)
			}
		})
		return
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "train.shard")
	cmd := exec.Command(os.Args[0], "-test.run=^TestWriteFileKilled$")
	cmd.Env = append(os.Environ(), killEnv+"="+path)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until the temporary file holds more than the write buffer.
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) && tempSize(dir) < 1<<20 {
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if tempSize(dir) == 0 {
		t.Fatal("the writer left no temporary file: it did not get to write")
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s after kill -9: %v, want no file", path, err)
	}
}

// tempSize returns the size of atomicfile's temporary file in dir (0: none).
func tempSize(dir string) int64 {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if atomicfile.IsTemp(e.Name()) {
			if info, err := e.Info(); err == nil {
				return info.Size()
			}
		}
	}
	return 0
}

// View gives Read's bytes, from the mapping where Open mapped the file (on
// Linux always) and read into the buffer where the Reader has none; a
// flipped byte in an item is reported as Read reports it.
func TestView(t *testing.T) {
	items := testItems()
	b := encode(t, testMeta(), items)
	b[headerSize+6+3] ^= 0x10 // inside item 1
	path := filepath.Join(t.TempDir(), "train.shard")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	opened, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer opened.Close()
	inMemory, err := NewReader(bytes.NewReader(b), int64(len(b)), path)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*Reader{opened, inMemory} {
		wantMapped := r == opened && runtime.GOOS == "linux"
		for i, it := range items {
			got, mapped, err := r.View(i, nil)
			if i == 1 {
				if err == nil || !strings.Contains(err.Error(), path+": item 1: CRC-32C") {
					t.Errorf("item 1: %v, want a CRC-32C error naming the file and item 1", err)
				}
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			mappedAsWanted := mapped == wantMapped || r == opened && runtime.GOOS != "linux"
			if !bytes.Equal(got, it.data) || !mappedAsWanted {
				t.Errorf("item %d: bytes %q mapped %v, want %q mapped %v", i, got, mapped, it.data, wantMapped)
			}
		}
		if _, _, err := r.View(3, nil); err == nil || !strings.Contains(err.Error(), "item 3 outside [0, 3)") {
			t.Errorf("View(3): %v", err)
		}
	}
	if err := opened.Close(); err != nil {
		t.Fatal(err)
	}
}
