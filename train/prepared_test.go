package train

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/data"
	"github.com/vit-train/vit-train/formats/imageshard"
)

// preparedFashionMNIST writes the embedded Fashion-MNIST subset as a
// prepared set of raw images and returns its folder.
func preparedFashionMNIST(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, split := range []data.Split{data.Train, data.Test} {
		ds, err := data.EmbeddedFashionMNIST(split)
		if err != nil {
			t.Fatal(err)
		}
		opt := data.PrepareOptions{Source: "fashion-mnist-embedded", Split: split, Encoding: imageshard.Raw}
		if err := data.WritePrepared(filepath.Join(dir, split.String()+data.PreparedExt), ds, opt); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// data.dataset=prepared opens both splits with the source's classes and
// normalisation, and trains exactly as the source does.
func TestPreparedDataset(t *testing.T) {
	dir := preparedFashionMNIST(t)
	ds, err := OpenDatasets(DataConfig{Dataset: "prepared", Root: dir})
	if err != nil {
		t.Fatal(err)
	}
	mean, std := data.FashionMNISTMeanStd()
	if fmt.Sprint(ds.Mean, ds.Std) != fmt.Sprint(mean, std) || len(ds.Classes) != 10 || ds.Train.Len() != 10000 || ds.Eval.Len() != 2000 {
		t.Fatalf("mean %v std %v, %d classes, %d and %d items", ds.Mean, ds.Std, len(ds.Classes), ds.Train.Len(), ds.Eval.Len())
	}
	runs := map[string]string{}
	for _, sets := range [][]string{nil, {"data.dataset=prepared", "data.root=" + dir}} {
		out := t.TempDir()
		if _, err := Run(context.Background(), tinyConfig(t, append(sets, "epochs=1")...), Options{Dir: out}); err != nil {
			t.Fatal(err)
		}
		runs[strings.Join(sets, " ")] = filepath.Join(out, LastCheckpoint)
	}
	sameCheckpoints(t, runs[""], runs["data.dataset=prepared data.root="+dir])
}

// A run on a prepared set resumes exactly after interrupts mid-epoch.
func TestPreparedResume(t *testing.T) {
	dir := preparedFashionMNIST(t)
	testResume(t, resumeCase{"prepared", []string{"data.dataset=prepared", "data.root=" + dir}, []stopAt{
		{AfterStep, 2, 2}, {BeforeEvaluate, 6, 6}, {AfterStep, 8, 2},
	}})
}

func TestPreparedDatasetMissing(t *testing.T) {
	_, err := OpenDatasets(DataConfig{Dataset: "prepared", Root: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "train.shard") {
		t.Errorf("%v, want an error naming train.shard", err)
	}
}

// A subset of a data set that hands out unconverted items does too, so
// that the loader still converts only the crops.
func TestSubsetKeepsItemSource(t *testing.T) {
	ds, err := OpenDatasets(DataConfig{Dataset: "prepared", Root: preparedFashionMNIST(t), TrainSubset: 100, EvalSubset: 50})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []data.Dataset{ds.Train, ds.Eval} {
		if _, ok := d.(data.SourceDataset); !ok || d.Len() > 100 {
			t.Errorf("%T of %d items: not a data.SourceDataset", d, d.Len())
		}
	}
	plain, err := OpenDatasets(DataConfig{Dataset: "fashion-mnist-embedded", TrainSubset: 100})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := plain.Train.(data.SourceDataset); ok || plain.Train.Len() != 100 {
		t.Errorf("a subset of the embedded set: %T of %d items", plain.Train, plain.Train.Len())
	}
}
