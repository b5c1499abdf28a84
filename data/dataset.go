package data

import (
	"fmt"

	"github.com/vit-train/vit-train/augment"
)

// Dataset is an indexed collection of labelled images.
type Dataset interface {
	// Len returns the number of items.
	Len() int
	// Item returns item i (0 <= i < Len()) as a fresh (C, H, W) image with
	// values in [0, 1], owned by the caller, and its label in
	// [0, len(Classes())). It is safe for concurrent use.
	Item(i int) (img augment.Image, label int, err error)
	// Classes returns the class names, indexed by label.
	Classes() []string
	// Shape returns the channel count and the image size; h and w are 0 when
	// images differ in size (image folders).
	Shape() (c, h, w int)
}

// Split selects the training or the test part of a dataset.
type Split int

const (
	// Train is the training split.
	Train Split = iota
	// Test is the test (validation) split.
	Test
)

// String returns "train" or "test".
func (s Split) String() string {
	switch s {
	case Train:
		return "train"
	case Test:
		return "test"
	}
	return fmt.Sprintf("Split(%d)", int(s))
}

func (s Split) check() error {
	if s != Train && s != Test {
		return fmt.Errorf("data: unknown split %d", int(s))
	}
	return nil
}
