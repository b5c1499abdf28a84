package train

import (
	"fmt"

	"github.com/vit-train/vit-train/augment"
	"github.com/vit-train/vit-train/data"
	"github.com/vit-train/vit-train/model"
)

// Datasets are a run's training and evaluation data with their normalisation.
type Datasets struct {
	Train, Eval data.Dataset
	Mean, Std   []float32
	Classes     []string
}

// OpenDatasets opens the dataset named in cfg.Data.
func OpenDatasets(cfg DataConfig) (*Datasets, error) {
	open := func(split data.Split) (data.Dataset, error) {
		switch cfg.Dataset {
		case "fashion-mnist-embedded":
			return data.EmbeddedFashionMNIST(split)
		case "fashion-mnist":
			return data.FashionMNIST(cfg.Root, split)
		case "mnist":
			return data.MNIST(cfg.Root, split)
		case "cifar10":
			return data.OpenCIFAR10(cfg.Root, split)
		case "cifar100":
			return data.OpenCIFAR100(cfg.Root, split, false)
		case "imagefolder":
			return data.OpenImageNet(cfg.Root, split, data.FolderOptions{SkipCorrupt: cfg.SkipCorrupt})
		case "prepared":
			return data.OpenPreparedSplit(cfg.Root, split)
		}
		return nil, fmt.Errorf("config: data.dataset = %q: want fashion-mnist-embedded, fashion-mnist, mnist, cifar10, cifar100, imagefolder or prepared", cfg.Dataset)
	}
	d := &Datasets{}
	var err error
	if d.Train, err = open(data.Train); err != nil {
		return nil, err
	}
	if d.Eval, err = open(data.Test); err != nil {
		return nil, err
	}
	d.Classes = d.Train.Classes()
	source := cfg.Dataset
	if p, ok := d.Train.(*data.Prepared); ok {
		source = p.Source()
	}
	d.Mean, d.Std = meanStd(source)
	if cfg.TrainSubset > 0 && cfg.TrainSubset < d.Train.Len() {
		d.Train = firstItems(d.Train, cfg.TrainSubset)
	}
	if cfg.EvalSubset > 0 && cfg.EvalSubset < d.Eval.Len() {
		d.Eval = firstItems(d.Eval, cfg.EvalSubset)
	}
	return d, nil
}

// meanStd returns the normalisation of the data set named dataset (a
// prepared set's source): its own for the MNISTs and CIFARs, ImageNet's for
// image folders.
func meanStd(dataset string) (mean, std []float32) {
	switch dataset {
	case "fashion-mnist-embedded", "fashion-mnist":
		return data.FashionMNISTMeanStd()
	case "mnist":
		return data.MNISTMeanStd()
	case "cifar10":
		return data.CIFAR10MeanStd()
	case "cifar100":
		return data.CIFAR100MeanStd()
	}
	return data.ImageNetMeanStd()
}

// subset is the first n items of a dataset.
type subset struct {
	data.Dataset
	n int
}

func (s subset) Len() int { return s.n }

// sourceSubset is the first n items of a data.SourceDataset, which it
// stays.
type sourceSubset struct {
	subset
	src data.SourceDataset
}

func (s sourceSubset) ItemSource(i int) (data.ItemSource, int, error) { return s.src.ItemSource(i) }

// firstItems returns the first n items of ds, a data.SourceDataset when ds
// is one.
func firstItems(ds data.Dataset, n int) data.Dataset {
	if sd, ok := ds.(data.SourceDataset); ok {
		return sourceSubset{subset{ds, n}, sd}
	}
	return subset{ds, n}
}

// CheckModel reports a network that cannot take the data.
func (d *Datasets) CheckModel(s model.Spec) error {
	channels, _ := s.Input()
	return d.checkInput(s.Name(), channels, s.NumClasses())
}

// checkInput reports a model of channels inputs and classes outputs that
// cannot take the data.
func (d *Datasets) checkInput(name string, channels, classes int) error {
	c, _, _ := d.Train.Shape()
	if c != channels {
		return fmt.Errorf("model %s takes %d channels (in_chans) but the data has %d", name, channels, c)
	}
	if n := len(d.Classes); n != classes {
		return fmt.Errorf("model %s has %d classes (num_classes) but the data has %d; set model.num_classes=%d", name, classes, n, n)
	}
	return nil
}

// Pipelines builds the training and evaluation pipelines of a run: DeiT's
// training pipeline (augment.DeiTTrainConfig: bicubic, per-pixel erasing
// of one box) with the crop, flip, colour jitter, RandAugment and erasing
// probability of cfg.
func Pipelines(cfg AugConfig, size int, mean, std []float32) (trainP, evalP augment.Pipeline, err error) {
	tc := augment.DeiTTrainConfig(size, mean, std)
	tc.HFlip, tc.ColorJitter, tc.AutoAugment, tc.REProb = cfg.HFlip, cfg.ColorJitter, cfg.AutoAugment, cfg.ReProb
	switch cfg.Train {
	case "padcrop-flip":
		tc.Crop = augment.CropPad
	case "rrc-flip":
		tc.Crop = augment.CropRRC
	case "none":
	default:
		return trainP, evalP, fmt.Errorf("config: aug.train = %q: want padcrop-flip, rrc-flip or none", cfg.Train)
	}
	ec := augment.EvalConfig{Size: size, CropPct: cfg.CropPct, Interp: augment.Bicubic, Mean: mean, Std: std}
	if cfg.Train == "none" {
		trainP, err = augment.EvalPipeline(ec)
	} else {
		trainP, err = augment.TrainPipeline(tc)
	}
	if err != nil {
		return trainP, evalP, err
	}
	evalP, err = augment.EvalPipeline(ec)
	return trainP, evalP, err
}
