package data

import (
	"fmt"

	"github.com/vit-train/vit-train/augment"
)

// Memory is a dataset of same-size 8-bit images held in memory (CIFAR, IDX).
// Item converts one image to float32 on demand.
type Memory struct {
	Name       string   // where the data came from, for messages
	N, C, H, W int      // images and their (C, H, W)
	Pix        []uint8  // (N, C, H, W), planar per image
	Labels     []int    // (N,)
	ClassNames []string // indexed by label
}

// newMemory checks the sizes and every label of a Memory.
func newMemory(m *Memory) (*Memory, error) {
	if m.N < 0 || m.C <= 0 || m.H <= 0 || m.W <= 0 || len(m.Pix) != m.N*m.C*m.H*m.W || len(m.Labels) != m.N {
		return nil, fmt.Errorf("data: %s: %d pixels and %d labels do not fit N=%d (C, H, W)=(%d, %d, %d)", m.Name, len(m.Pix), len(m.Labels), m.N, m.C, m.H, m.W)
	}
	for i, l := range m.Labels {
		if l < 0 || l >= len(m.ClassNames) {
			return nil, fmt.Errorf("data: %s: record %d: label %d outside [0, %d)", m.Name, i, l, len(m.ClassNames))
		}
	}
	return m, nil
}

// Len returns the number of images.
func (m *Memory) Len() int { return m.N }

// Classes returns the class names.
func (m *Memory) Classes() []string { return m.ClassNames }

// Shape returns (C, H, W).
func (m *Memory) Shape() (c, h, w int) { return m.C, m.H, m.W }

// Item returns image i as float32 values v/255 and its label.
func (m *Memory) Item(i int) (augment.Image, int, error) {
	if i < 0 || i >= m.N {
		return augment.Image{}, 0, fmt.Errorf("data: %s: index %d outside [0, %d)", m.Name, i, m.N)
	}
	size := m.C * m.H * m.W
	img := augment.NewImage(m.C, m.H, m.W)
	src := m.Pix[i*size : (i+1)*size]
	for k, v := range src {
		img.Pix[k] = augment.ByteValue(v)
	}
	return img, m.Labels[i], nil
}

// Label returns image i's label.
func (m *Memory) Label(i int) int { return m.Labels[i] }
