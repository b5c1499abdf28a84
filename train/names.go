package train

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/vit-train/vit-train/augment"
	"github.com/vit-train/vit-train/data"
	"github.com/vit-train/vit-train/internal/layered"
	"github.com/vit-train/vit-train/optim"
)

// A setting that takes a name (optim.name, sched.name, data.dataset,
// aug.train) has one table here: its names, in the order help text lists
// them, each with what it builds and the settings it reads that not every
// name of the table reads. Validate (the names, and the settings that
// cannot take effect), the builders (newOptimizer, newSchedule,
// OpenDatasets, Pipelines) and the command line's help all read the
// table, so a name is added in one place.

// choice is one name a setting takes, what the name builds, and the keys
// it reads that other names of its table do not all read.
type choice[T any] struct {
	name  string
	build T
	reads []string
}

// choices is the table of a setting's names.
type choices[T any] struct {
	key  string // the setting, as in --set: "optim.name"
	list []choice[T]
}

// lookup returns what name builds; an unknown name is an error naming the
// setting, the value and the names it takes.
func (c choices[T]) lookup(name string) (T, error) {
	for _, ch := range c.list {
		if ch.name == name {
			return ch.build, nil
		}
	}
	var none T
	return none, fmt.Errorf("config: %s = %q: want %s", c.key, name, c.want())
}

// check is lookup's error alone.
func (c choices[T]) check(name string) error {
	_, err := c.lookup(name)
	return err
}

// names lists the setting's names in table order.
func (c choices[T]) names() []string {
	out := make([]string, len(c.list))
	for i, ch := range c.list {
		out[i] = ch.name
	}
	return out
}

// want is the names as a sentence: "a, b or c".
func (c choices[T]) want() string { return sentence(c.names()) }

// unread lists the keys that some names of c read but name does not, each
// with its value in now and whether that differs from its value in
// defaults (set to no effect).
func (c choices[T]) unread(name string, now, defaults layered.Tree) []ineffective {
	var keys []string
	readers := map[string][]string{} // the names that read each key
	for _, ch := range c.list {
		for _, k := range ch.reads {
			if readers[k] == nil {
				keys = append(keys, k)
			}
			readers[k] = append(readers[k], ch.name)
		}
	}
	var out []ineffective
	for _, k := range keys {
		if slices.Contains(readers[k], name) {
			continue
		}
		v := leaf(now, k)
		verb := "does"
		if len(readers[k]) > 1 {
			verb = "do"
		}
		why := fmt.Sprintf("%s = %s does not read it (%s %s)", c.key, name, sentence(readers[k]), verb)
		out = append(out, ineffective{k, v, v != leaf(defaults, k), why})
	}
	return out
}

// leaf is the value of the dotted key in t.
func leaf(t layered.Tree, key string) any {
	var v any = map[string]any(t)
	for part := range strings.SplitSeq(key, ".") {
		v = v.(map[string]any)[part]
	}
	return v
}

// sentence joins names as "a, b or c".
func sentence(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Choice is a setting that takes a name, with the names it takes, for
// help text.
type Choice struct {
	Key   string
	Names []string
}

// Choices lists the settings that take a name from a fixed list, with
// their names: what Validate accepts and a run can build.
func Choices() []Choice {
	return []Choice{
		{optimizers.key, optimizers.names()},
		{schedules.key, schedules.names()},
		{datasets.key, datasets.names()},
		{trainPipelines.key, trainPipelines.names()},
	}
}

// checkNames refuses a name that its setting's table does not hold.
func (c Config) checkNames() error {
	for _, err := range []error{optimizers.check(c.Optim.Name), schedules.check(c.Sched.Name),
		datasets.check(c.Data.Dataset), trainPipelines.check(c.Aug.Train)} {
		if err != nil {
			return err
		}
	}
	return nil
}

// newOptimizerFunc builds an optimiser over params in groups.
type newOptimizerFunc func(cfg OptimConfig, params []optim.Param, groups []optim.Group) (optim.Optimizer, error)

// optimizers are optim.name's optimisers.
var optimizers = choices[newOptimizerFunc]{key: "optim.name", list: []choice[newOptimizerFunc]{
	{"adamw", func(cfg OptimConfig, params []optim.Param, groups []optim.Group) (optim.Optimizer, error) {
		return optim.NewAdamW(params, groups, optim.AdamWConfig{Beta1: cfg.Beta1, Beta2: cfg.Beta2, Eps: cfg.Eps, WeightDecay: cfg.WeightDecay})
	}, []string{"optim.beta1", "optim.beta2", "optim.eps"}},
	{"sgd", func(cfg OptimConfig, params []optim.Param, groups []optim.Group) (optim.Optimizer, error) {
		return optim.NewSGD(params, groups, optim.SGDConfig{Momentum: cfg.Momentum, Nesterov: cfg.Nesterov, WeightDecay: cfg.WeightDecay})
	}, []string{"optim.momentum", "optim.nesterov"}},
}}

// schedule is a learning-rate schedule that checks its own fields.
type schedule interface {
	optim.Schedule
	Validate() error
}

// newScheduleFunc builds a schedule peaking at lr after warm, for a run of
// steps optimiser steps of which stepsPerEpoch make an epoch.
type newScheduleFunc func(sc SchedConfig, lr float64, warm optim.Warmup, steps, stepsPerEpoch int) schedule

// schedules are sched.name's schedules.
var schedules = choices[newScheduleFunc]{key: "sched.name", list: []choice[newScheduleFunc]{
	{"cosine", func(sc SchedConfig, lr float64, warm optim.Warmup, steps, _ int) schedule {
		return optim.Cosine{BaseLR: lr, MinLR: sc.MinLR, Steps: steps, Warmup: warm}
	}, []string{"sched.min_lr"}},
	{"step", func(sc SchedConfig, lr float64, warm optim.Warmup, _, stepsPerEpoch int) schedule {
		return optim.StepDecay{BaseLR: lr, DecaySteps: max(1, int(math.Round(sc.DecayEpochs*float64(stepsPerEpoch)))), Gamma: sc.DecayRate, Warmup: warm}
	}, []string{"sched.decay_epochs", "sched.decay_rate"}},
	{"constant", func(_ SchedConfig, lr float64, warm optim.Warmup, _, _ int) schedule {
		return optim.Constant{BaseLR: lr, Warmup: warm}
	}, nil},
}}

// dataset opens a split of a data set and gives its normalisation.
type dataset struct {
	open func(cfg DataConfig, split data.Split) (data.Dataset, error)
	// meanStd is the data set's own normalisation; nil for ImageNet's.
	meanStd func() (mean, std []float32)
}

// datasets are data.dataset's data sets.
var datasets = choices[dataset]{key: "data.dataset", list: []choice[dataset]{
	{"fashion-mnist-embedded", dataset{func(_ DataConfig, s data.Split) (data.Dataset, error) { return data.EmbeddedFashionMNIST(s) }, data.FashionMNISTMeanStd}, nil},
	{"fashion-mnist", dataset{func(c DataConfig, s data.Split) (data.Dataset, error) { return data.FashionMNIST(c.Root, s) }, data.FashionMNISTMeanStd}, root},
	{"mnist", dataset{func(c DataConfig, s data.Split) (data.Dataset, error) { return data.MNIST(c.Root, s) }, data.MNISTMeanStd}, root},
	{"cifar10", dataset{func(c DataConfig, s data.Split) (data.Dataset, error) { return data.OpenCIFAR10(c.Root, s) }, data.CIFAR10MeanStd}, root},
	{"cifar100", dataset{func(c DataConfig, s data.Split) (data.Dataset, error) { return data.OpenCIFAR100(c.Root, s, false) }, data.CIFAR100MeanStd}, root},
	{"imagefolder", dataset{openImageFolder, nil}, []string{"data.root", "data.skip_corrupt"}},
	{"prepared", dataset{openPrepared, nil}, root},
}}

// root is what a data set read from disk reads.
var root = []string{"data.root"}

// trainPipelines are aug.train's training pipelines: the crop each takes,
// or none for the evaluation pipeline.
var trainPipelines = choices[trainCrop]{key: "aug.train", list: []choice[trainCrop]{
	{"padcrop-flip", trainCrop{augment.CropPad, true}, augmentations},
	{"rrc-flip", trainCrop{augment.CropRRC, true}, augmentations},
	{"none", trainCrop{}, nil},
}}

// augmentations are what a training pipeline reads and the evaluation
// pipeline (aug.train = none) does not.
var augmentations = []string{"aug.hflip", "aug.color_jitter", "aug.auto_augment", "aug.reprob"}

// trainCrop is the crop of a training pipeline; augments is false for a
// run that trains on the evaluation pipeline.
type trainCrop struct {
	crop     augment.CropMode
	augments bool
}
