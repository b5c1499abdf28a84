package interop

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/vit-train/vit-train/formats/npy"
	"github.com/vit-train/vit-train/formats/safetensors"
)

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// maxAlloc bounds what converting the small golden files may allocate.
const maxAlloc = 16 << 20

// A name with a far block number must not make the importer lay out that
// many blocks: with block numbers taken at face value, one 4-byte tensor
// named blocks.1048575.x cost 39 s and 8 GB.
func TestStrayBlockNumber(t *testing.T) {
	base := plainTensors(t)
	for _, n := range []int{2, 3, 1000, 1<<20 - 1, 1 << 40} {
		name := fmt.Sprintf("blocks.%d.x", n)
		tensors := edit(base, nil, safetensors.Tensor{Name: name, Shape: []int{1}, Data: []float32{0}})
		var err error
		if a := allocated(func() { _, err = FromTimm(tensors, Hints{Heads: 3}) }); a > maxAlloc {
			t.Errorf("%s: FromTimm allocated %d MB", name, a>>20)
		}
		if n == 2 { // blocks 0 to 2: a depth of 3, and block 2 is incomplete
			wantErr(t, name, err, `tensor "blocks.2.norm1.weight" is missing`)
			continue
		}
		wantErr(t, name, err, fmt.Sprintf(`tensor %q is in block %d, but there are no blocks.2.* tensors`, name, n))
	}
	_, err := FromTimm(edit(base, nil, safetensors.Tensor{Name: "blocks.007.x", Shape: []int{1}, Data: []float32{0}}), Hints{Heads: 3})
	wantErr(t, "blocks.007", err, `unexpected tensor "blocks.007.x"`)
	_, err = FromTimm(edit(base, []string{"blocks.0.norm1.weight", "blocks.0.norm1.bias", "blocks.0.attn.qkv.weight", "blocks.0.attn.qkv.bias",
		"blocks.0.attn.proj.weight", "blocks.0.attn.proj.bias", "blocks.0.norm2.weight", "blocks.0.norm2.bias",
		"blocks.0.mlp.fc1.weight", "blocks.0.mlp.fc1.bias", "blocks.0.mlp.fc2.weight", "blocks.0.mlp.fc2.bias"}), Hints{Heads: 3})
	wantErr(t, "no block 0", err, `"blocks.1.`, "no blocks.0.* tensors")

	arrays := goldenJAX(t)
	for _, n := range []int{1000, 1<<20 - 1} {
		name := fmt.Sprintf("Transformer/encoderblock_%d/x", n)
		with := append(append([]npy.Array(nil), arrays...), npy.Array{Name: name, Shape: []int{1}, Data: []float32{0}})
		var err error
		if a := allocated(func() { _, err = FromJAX(with, Hints{}) }); a > maxAlloc {
			t.Errorf("%s: FromJAX allocated %d MB", name, a>>20)
		}
		wantErr(t, name, err, fmt.Sprintf(`array %q is in block %d, but there are no Transformer/encoderblock_2/* arrays`, name, n))
	}
}

// Problems are counted, not all described: a file that lacks most of
// what its shapes imply yields a short error.
func TestManyProblems(t *testing.T) {
	base := plainTensors(t)
	var junk []safetensors.Tensor
	for i := range 10000 {
		junk = append(junk, safetensors.Tensor{Name: fmt.Sprintf("junk.%05d", i), Shape: []int{1}, Data: []float32{0}})
	}
	_, err := FromTimm(edit(base, nil, junk...), Hints{Heads: 3})
	wantErr(t, "junk", err, `unexpected tensor "junk.00000"`, "and 9992 more problems")
	if len(err.Error()) > 4096 {
		t.Errorf("error of %d bytes", len(err.Error()))
	}
}

// Every proper prefix of a weights file is an error, and Import names the
// file.
func TestImportTruncated(t *testing.T) {
	st, err := os.ReadFile(golden + "tiny.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	npz, err := os.ReadFile(golden + "tiny.npz")
	if err != nil {
		t.Fatal(err)
	}
	for n := range len(st) {
		f, err := safetensors.Read(bytes.NewReader(st[:n]), int64(n))
		if err == nil {
			if _, err = FromTimm(f.Tensors, Hints{Heads: 2}); err == nil {
				t.Fatalf("safetensors cut to %d of %d bytes imported", n, len(st))
			}
		}
	}
	for n := range len(npz) {
		arrays, err := npy.DecodeNPZ(bytes.NewReader(npz[:n]), int64(n))
		if err == nil {
			if _, err = FromJAX(arrays, Hints{}); err == nil {
				t.Fatalf("npz cut to %d of %d bytes imported", n, len(npz))
			}
		}
	}
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		b    []byte
	}{{"cut.safetensors", st[:len(st)/2]}, {"cut.npz", npz[:len(npz)-3]}, {"cut-header.safetensors", st[:100]}} {
		p := filepath.Join(dir, c.name)
		if err := os.WriteFile(p, c.b, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Import(p, Hints{Heads: 2})
		wantErr(t, c.name, err, p)
	}
}
