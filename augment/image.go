package augment

import "fmt"

// Image is a planar CHW float32 image with values in [0, 1]: pixel (c, y, x)
// is Pix[(c*H+y)*W+x], len(Pix) == C*H*W.
type Image struct {
	C, H, W int
	Pix     []float32
}

// Plane returns channel c as a slice of H*W values (row-major, (H, W)).
func (m Image) Plane(c int) []float32 {
	n := m.H * m.W
	return m.Pix[c*n : (c+1)*n]
}

// Valid reports an error when the sizes are not positive or Pix does not hold
// exactly C*H*W values.
func (m Image) Valid() error {
	if m.C <= 0 || m.H <= 0 || m.W <= 0 {
		return fmt.Errorf("augment: image size C=%d H=%d W=%d is not positive", m.C, m.H, m.W)
	}
	if len(m.Pix) != m.C*m.H*m.W {
		return fmt.Errorf("augment: image has %d values, want C*H*W = %d*%d*%d = %d", len(m.Pix), m.C, m.H, m.W, m.C*m.H*m.W)
	}
	return nil
}

// Clone returns a copy of m in a new buffer from the pool.
func (m Image) Clone() Image {
	out := NewImage(m.C, m.H, m.W)
	copy(out.Pix, m.Pix)
	return out
}
