package data

import (
	"fmt"

	"github.com/vit-train/vit-train/augment"
)

// View is the items of a dataset at Indices, in that order: item i of the
// view is item Indices[i] of the dataset.
type View struct {
	Dataset
	Indices []int
}

// NewView returns the View of ds at indices, which stays a SourceDataset
// when ds is one, so that the loader still converts only what its
// pipeline reads.
func NewView(ds Dataset, indices []int) Dataset {
	v := View{Dataset: ds, Indices: indices}
	if sd, ok := ds.(SourceDataset); ok {
		return sourceView{View: v, src: sd}
	}
	return v
}

// Len returns the number of indices.
func (v View) Len() int { return len(v.Indices) }

// Item returns item Indices[i] of the dataset.
func (v View) Item(i int) (augment.Image, int, error) {
	if err := v.check(i); err != nil {
		return augment.Image{}, 0, err
	}
	return v.Dataset.Item(v.Indices[i])
}

// Unwrap returns the dataset the view draws from.
func (v View) Unwrap() Dataset { return v.Dataset }

func (v View) check(i int) error {
	if i < 0 || i >= len(v.Indices) {
		return fmt.Errorf("data: item %d of a view of %d", i, len(v.Indices))
	}
	return nil
}

// sourceView is a View of a SourceDataset.
type sourceView struct {
	View
	src SourceDataset
}

// ItemSource returns item Indices[i] of the dataset, not converted.
func (v sourceView) ItemSource(i int) (ItemSource, int, error) {
	if err := v.check(i); err != nil {
		return nil, 0, err
	}
	return v.src.ItemSource(v.Indices[i])
}
