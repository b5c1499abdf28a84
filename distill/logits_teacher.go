package distill

import (
	"fmt"

	"github.com/vit-train/vit-train/augment"
	"github.com/vit-train/vit-train/formats/npy"
)

// LogitsTeacher is teacher logits read from a .npy file, one row per
// training item. With Mixup or CutMix, image i of a batch is mixed with
// image B−1−i with weight λ, and its teacher logits are mixed the same way:
// the teacher saw the un-augmented images, so this is an approximation of
// DeiT, which runs the teacher on the mixed batch.
type LogitsTeacher struct {
	path string
	data []float32 // (n, c)
	n, c int
}

// OpenLogitsTeacher reads the (n, classes) logits at path ('<f2', '<f4'
// or '<f8', narrowed to float32). Errors name the file and the dimension
// that does not match.
func OpenLogitsTeacher(path string, n, classes int) (*LogitsTeacher, error) {
	a, err := npy.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("distill.teacher_logits: %w", err)
	}
	shape := a.Shape
	if len(shape) != 2 {
		return nil, fmt.Errorf("distill.teacher_logits %s: shape %v, want (N, C) = (%d, %d)", path, shape, n, classes)
	}
	if shape[0] != n {
		return nil, fmt.Errorf("distill.teacher_logits %s: N = %d rows, but the training set has %d items (write the file with vit-train logits and the run's data settings)", path, shape[0], n)
	}
	if shape[1] != classes {
		return nil, fmt.Errorf("distill.teacher_logits %s: C = %d columns, but the model has %d classes", path, shape[1], classes)
	}
	return &LogitsTeacher{path: path, data: a.Data, n: n, c: classes}, nil
}

// Fill copies the rows of indices and mixes them as mix mixed the images.
func (t *LogitsTeacher) Fill(_ []float32, indices []int, mix augment.MixInfo, dst []float32) error {
	c := t.c
	for i, idx := range indices {
		if idx < 0 || idx >= t.n {
			return fmt.Errorf("distill.teacher_logits %s: item %d is out of its %d rows", t.path, idx, t.n)
		}
		copy(dst[i*c:(i+1)*c], t.data[idx*c:(idx+1)*c])
	}
	if mix.Lam == 1 {
		return nil
	}
	lam := float32(mix.Lam)
	b := len(indices)
	for i := 0; i < b/2; i++ {
		j := b - 1 - i
		zi, zj := dst[i*c:(i+1)*c], dst[j*c:(j+1)*c]
		for k := range zi {
			a, o := zi[k], zj[k]
			zi[k] = lam*a + (1-lam)*o
			zj[k] = lam*o + (1-lam)*a
		}
	}
	return nil
}

// Describe names the file.
func (t *LogitsTeacher) Describe() string { return "logits from " + t.path }
