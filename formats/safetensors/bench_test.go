package safetensors

import (
	"fmt"
	"path/filepath"
	"testing"
)

// vitBTensors returns 152 F32 tensors with ViT-B/16's 86.6M values.
func vitBTensors() []Tensor {
	const d, hidden = 768, 3072
	var ts []Tensor
	add := func(name string, shape ...int) {
		n := 1
		for _, s := range shape {
			n *= s
		}
		ts = append(ts, Tensor{Name: name, Shape: shape, Data: make([]float32, n)})
	}
	add("cls_token", 1, 1, d)
	add("pos_embed", 1, 197, d)
	add("patch_embed.proj.weight", d, 3, 16, 16)
	add("patch_embed.proj.bias", d)
	for k := range 12 {
		b := fmt.Sprintf("blocks.%d.", k)
		for _, n := range []string{"norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias", "attn.proj.bias", "mlp.fc2.bias"} {
			add(b+n, d)
		}
		add(b+"attn.qkv.weight", 3*d, d)
		add(b+"attn.qkv.bias", 3*d)
		add(b+"attn.proj.weight", d, d)
		add(b+"mlp.fc1.weight", hidden, d)
		add(b+"mlp.fc1.bias", hidden)
		add(b+"mlp.fc2.weight", d, hidden)
	}
	add("norm.weight", d)
	add("norm.bias", d)
	add("head.weight", 1000, d)
	add("head.bias", 1000)
	return ts
}

func benchBytes(ts []Tensor) int64 {
	var n int64
	for _, t := range ts {
		n += 4 * int64(len(t.Data))
	}
	return n
}

// BenchmarkWriteFileAtomicViTB writes a ViT-B/16 checkpoint (346 MB, with
// fsync) and reports the throughput.
func BenchmarkWriteFileAtomicViTB(b *testing.B) {
	ts := vitBTensors()
	path := filepath.Join(b.TempDir(), "vit_b.safetensors")
	b.SetBytes(benchBytes(ts))
	for b.Loop() {
		if err := WriteFileAtomic(path, ts, map[string]string{"format": "pt"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadFileViTB reads a ViT-B/16 checkpoint back.
func BenchmarkReadFileViTB(b *testing.B) {
	ts := vitBTensors()
	path := filepath.Join(b.TempDir(), "vit_b.safetensors")
	if err := WriteFileAtomic(path, ts, nil); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(benchBytes(ts))
	for b.Loop() {
		if _, err := ReadFile(path); err != nil {
			b.Fatal(err)
		}
	}
}
