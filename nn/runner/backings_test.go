package runner

import (
	"testing"
	"unsafe"

	"gorgonia.org/tensor"
)

// TestMakeBackings checks the buffers cut from one block per dtype: each
// of its dtype and size, capped at it, 64-byte aligned, and none
// overlapping another.
func TestMakeBackings(t *testing.T) {
	keys := []bufferKey{{tensor.Float32, 5}, {tensor.Float64, 3}, {tensor.Float32, 17}, {tensor.Int, 2}, {tensor.Float32, 1 << 20}, {tensor.Float64, 9}, {tensor.Float32, 0}}
	backings := makeBackings(keys)
	type span struct {
		buffer int
		lo, hi uintptr
	}
	var spans []span
	for i, k := range keys {
		var p unsafe.Pointer
		var n, c int
		switch b := backings[i].(type) {
		case []float32:
			p, n, c = unsafe.Pointer(unsafe.SliceData(b)), len(b), cap(b)
		case []float64:
			p, n, c = unsafe.Pointer(unsafe.SliceData(b)), len(b), cap(b)
		case []int:
			p, n, c = unsafe.Pointer(unsafe.SliceData(b)), len(b), cap(b)
		}
		if k.dt != dtypeOf(backings[i]) || n != k.size || c != k.size {
			t.Fatalf("buffer %d: %T of length %d, capacity %d; want %v × %d", i, backings[i], n, c, k.dt, k.size)
		}
		if k.size == 0 || k.dt == tensor.Int {
			continue
		}
		if uintptr(p)%64 != 0 {
			t.Errorf("buffer %d (%v × %d) starts at %p, not on a 64-byte boundary", i, k.dt, k.size, p)
		}
		s := span{i, uintptr(p), uintptr(p) + uintptr(k.size*int(k.dt.Size()))}
		for _, o := range spans {
			if s.lo < o.hi && o.lo < s.hi {
				t.Errorf("buffer %d overlaps buffer %d", i, o.buffer)
			}
		}
		spans = append(spans, s)
	}
}

func dtypeOf(b any) tensor.Dtype {
	switch b.(type) {
	case []float32:
		return tensor.Float32
	case []float64:
		return tensor.Float64
	}
	return tensor.Int
}
