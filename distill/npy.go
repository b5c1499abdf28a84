// Package distill holds what DeiT distillation needs besides the losses:
// the teacher's logits, stored as NumPy .npy arrays (N, C) so that a
// teacher run in any framework can be used.
package distill

import (
	"github.com/vit-train/vit-train/formats/npy"
)

// ReadNPY reads a little-endian floating-point .npy array (format 1.0, 2.0
// or 3.0; '<f2', '<f4' or '<f8', narrowed to float32), returning its
// elements in row-major order and its shape, e.g. (N, C) teacher logits;
// callers check the rank they need. Errors name the file, the field at
// fault and its byte offset (see npy.Decode).
func ReadNPY(path string) (data []float32, shape []int, err error) {
	a, err := npy.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	return a.Data, a.Shape, nil
}

// WriteNPY writes data with the given shape as a float32 .npy file, byte for
// byte as NumPy does, atomically (see npy.WriteFile).
func WriteNPY(path string, data []float32, shape []int) error {
	return npy.WriteFile(path, data, shape)
}
