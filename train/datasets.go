package train

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vit-train/vit-train/augment"
	"github.com/vit-train/vit-train/data"
	"github.com/vit-train/vit-train/formats/atomicfile"
	"github.com/vit-train/vit-train/model"
)

// Datasets are a run's training and evaluation data with their normalisation.
type Datasets struct {
	Train, Eval data.Dataset
	Mean, Std   []float32
	Classes     []string
	Name        string // data.dataset
	Root        string // data.root
	// HeldOut are the indices in the training set of the images held out
	// for validation (data.val_split), which Eval then holds; nil when the
	// run validates on the test set.
	HeldOut []int
}

// OpenDatasets opens the dataset named in cfg.Data.
func OpenDatasets(cfg DataConfig) (*Datasets, error) {
	set, err := datasets.lookup(cfg.Dataset)
	if err != nil {
		return nil, err
	}
	open := func(split data.Split) (data.Dataset, error) { return set.open(cfg, split) }
	d := &Datasets{Name: cfg.Dataset, Root: cfg.Root}
	if d.Train, err = open(data.Train); err != nil {
		return nil, err
	}
	source := cfg.Dataset
	if p, ok := d.Train.(*data.Prepared); ok {
		source = p.Source()
	}
	d.Mean, d.Std = meanStd(source)
	if cfg.ValSplit > 0 {
		train, val, err := data.HoldOut(d.Train, cfg.ValSplit, cfg.ValSeed)
		if err != nil {
			return nil, fmt.Errorf("config: data.val_split = %v: %w", cfg.ValSplit, err)
		}
		d.Train, d.Eval, d.HeldOut = data.NewView(d.Train, train.Indices), data.NewView(d.Train, val.Indices), val.Indices
	} else if d.Eval, err = open(data.Test); err != nil {
		return nil, err
	} else if err := labelByTrainingClasses(d.Eval, d.Train.Classes(), cfg); err != nil {
		return nil, err
	}
	d.Train = data.Subset(d.Train, cfg.TrainSubset)
	d.Eval = data.Subset(d.Eval, cfg.EvalSubset)
	d.Classes = d.Train.Classes()
	if len(d.Classes) < 2 {
		return nil, fmt.Errorf("config: data.root = %s (data.dataset = %s) holds %d class (%s): a classifier needs two or more, one folder for each", cfg.Root, cfg.Dataset, len(d.Classes), classList(d.Classes))
	}
	return d, nil
}

// labelByTrainingClasses makes the test split eval label its images by
// the training split's classes, by name: an image folder's validation
// split may lack some classes, which would otherwise shift the labels of
// the classes after them. A test split of other classes is an error.
func labelByTrainingClasses(eval data.Dataset, classes []string, cfg DataConfig) error {
	if slices.Equal(eval.Classes(), classes) {
		return nil
	}
	f, ok := eval.(*data.ImageFolder)
	if !ok {
		return fmt.Errorf("config: data.dataset = %s, data.root = %s: the test split's %d classes are not the training split's %d", cfg.Dataset, cfg.Root, len(eval.Classes()), len(classes))
	}
	if err := f.LabelBy(classes); err != nil {
		return fmt.Errorf("config: data.root = %s: the validation folder holds classes the training folder does not, which no model trained on it can predict: %w", cfg.Root, err)
	}
	return nil
}

// UnreadNote is a line naming the image files under data.root that the
// image folders leave out because they are of formats vit-train does not
// decode (data.ImageFolder.Unread), or "" where there are none.
func (d *Datasets) UnreadNote() string {
	var files []string
	seen := map[*data.ImageFolder]bool{}
	for _, ds := range []data.Dataset{d.Train, d.Eval} {
		if f, ok := data.FolderOf(ds); ok && !seen[f] {
			seen[f] = true
			files = append(files, f.Unread...)
		}
	}
	return data.UnreadNote("data.root = "+d.Root, files)
}

// meanStd returns the normalisation of the data set named dataset (a
// prepared set's source): its own for the MNISTs and CIFARs, ImageNet's for
// image folders.
func meanStd(dataset string) (mean, std []float32) {
	if set, err := datasets.lookup(dataset); err == nil && set.meanStd != nil {
		return set.meanStd()
	}
	return data.ImageNetMeanStd()
}

// HeldOutFile is the run folder's record of the images held out for
// validation (data.val_split).
const HeldOutFile = "val_split.json"

// heldOutRecord is HeldOutFile's content.
type heldOutRecord struct {
	Fraction float64 `json:"fraction"`
	Seed     uint64  `json:"seed"`
	// TrainImages and ValImages are the sizes of the two parts; Evaluated
	// is how many of the held-out images each evaluation scores (fewer
	// with data.eval_subset).
	TrainImages int `json:"train_images"`
	ValImages   int `json:"val_images"`
	Evaluated   int `json:"evaluated"`
	// Indices are the held-out images' indices in the training set.
	Indices []int `json:"indices"`
}

// writeHeldOut records the held-out split of d, opened with cfg, as
// dir/HeldOutFile; it writes nothing when the run validates on the test
// set.
func (d *Datasets) writeHeldOut(cfg DataConfig, dir string) error {
	if d.HeldOut == nil {
		return nil
	}
	rec := heldOutRecord{Fraction: cfg.ValSplit, Seed: cfg.ValSeed, TrainImages: d.Train.Len(), ValImages: len(d.HeldOut), Evaluated: d.Eval.Len(), Indices: d.HeldOut}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, HeldOutFile), func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}

// openImageFolder opens split of the image folder at data.root, naming
// the setting when it is not set or not such a folder. With
// data.val_split, a data.root that holds the class folders themselves,
// and no train/, is the training set.
func openImageFolder(cfg DataConfig, split data.Split) (data.Dataset, error) {
	if cfg.Root == "" {
		return nil, fmt.Errorf("config: data.dataset = imagefolder reads data.root, which is not set: set it to the folder that holds train/ and val/")
	}
	opt := data.FolderOptions{SkipCorrupt: cfg.SkipCorrupt}
	f, err := data.OpenImageFolderSplit(cfg.Root, split, opt)
	var missing *data.MissingSplitError
	if errors.As(err, &missing) {
		flat, flatErr := openClassFolders(cfg.Root, opt)
		switch {
		case flatErr == nil && split == data.Train && cfg.ValSplit > 0:
			return flat, nil
		case flatErr == nil:
			return nil, &ClassFoldersError{Folder: flat}
		case split == data.Test:
			return nil, fmt.Errorf("config: data.root = %s has a training split but no folder for the test split (%s): set data.val_split=0.1 to validate on a tenth of the training images, or add a val/ folder with the same class folders", cfg.Root, missing.Tried())
		}
	}
	if err != nil {
		return nil, fmt.Errorf("config: data.root = %s (data.dataset = imagefolder, a folder that holds train/ and val/): %w", cfg.Root, err)
	}
	return f, nil
}

// ClassFoldersError is the error of a data.root of class folders with no
// training and validation folders (photos/cat, photos/dog), opened
// without data.val_split; Folder is the folder of all its images.
type ClassFoldersError struct {
	Folder *data.ImageFolder
}

func (e *ClassFoldersError) Error() string {
	root := e.Folder.Root
	return fmt.Sprintf("config: data.root = %s holds class folders (%s), not train/ and val/: set data.val_split=0.1 to train on nine tenths of their images and validate on the rest, or move them into %s and %s", root, classList(e.Folder.Classes()), filepath.Join(root, "train")+"/", filepath.Join(root, "val")+"/")
}

// openPrepared opens split of the prepared set at data.root; a set with no
// test split (prepared from class folders alone) says how to validate.
func openPrepared(cfg DataConfig, split data.Split) (data.Dataset, error) {
	p, err := data.OpenPreparedSplit(cfg.Root, split)
	if split == data.Test && errors.Is(err, fs.ErrNotExist) {
		if _, trainErr := os.Stat(filepath.Join(cfg.Root, data.PreparedFile(data.Train))); trainErr == nil {
			return nil, fmt.Errorf("config: data.root = %s (data.dataset = prepared) holds a training split and no test split: set data.val_split=0.1 to validate on a tenth of its images: %w", cfg.Root, err)
		}
	}
	return p, err
}

// openClassFolders opens root as one image folder of classes, unless one
// of its folders has a split's name.
func openClassFolders(root string, opt data.FolderOptions) (*data.ImageFolder, error) {
	f, err := data.OpenImageFolder(root, opt)
	if err != nil {
		return nil, err
	}
	for _, class := range f.Classes() {
		if data.IsSplitFolderName(class) {
			return nil, fmt.Errorf("data: image folder %s: folder %s/ is named as a split", root, class)
		}
	}
	return f, nil
}

// classList names the first few of classes.
func classList(classes []string) string {
	const shown = 4
	if len(classes) <= shown {
		return strings.Join(classes, ", ")
	}
	return strings.Join(classes[:shown], ", ") + fmt.Sprintf(", … %d in all", len(classes))
}

// CheckClassNames reports a model whose classes, named by names (a
// checkpoint's record of its data's classes; nil: none), give a class of
// the data another label than the data does: a teacher or an evaluated
// checkpoint trained on a folder with a class more or less, or renamed,
// would otherwise score every class after it as another. Names the data
// does not have (a model's own naming) are not compared.
func (d *Datasets) CheckClassNames(what string, names []string) error {
	label := make(map[string]int, len(names))
	for i, n := range names {
		label[n] = i
	}
	for i, c := range d.Classes {
		if j, ok := label[c]; ok && j != i {
			return fmt.Errorf("%s labels class %q %d, and the data (data.dataset = %s, data.root = %s) labels it %d: the model was trained on other classes, or in another order", what, c, j, d.Name, d.Root, i)
		}
	}
	return nil
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
		return fmt.Errorf("model %s takes %d channels (in_chans) but the data (data.dataset = %s) has %d; set data.dataset and data.root to data of %d channels", name, channels, d.Name, c, channels)
	}
	if n := len(d.Classes); n != classes {
		return fmt.Errorf("model %s has %d classes (num_classes) but the data (data.dataset = %s) has %d; set model.num_classes=%d, or data.dataset and data.root to the model's data", name, classes, d.Name, n, n)
	}
	return nil
}

// Pipelines builds the training and evaluation pipelines of a run: DeiT's
// training pipeline (augment.DeiTTrainConfig: bicubic, per-pixel erasing
// of one box) with the crop, flip, colour jitter, RandAugment and erasing
// probability of cfg, and the evaluation pipeline of the run's
// preprocessing (runPreprocessing), which its checkpoints record.
func Pipelines(cfg AugConfig, size int, mean, std []float32) (trainP, evalP augment.Pipeline, err error) {
	tc := augment.DeiTTrainConfig(size, mean, std)
	tc.HFlip, tc.ColorJitter, tc.AutoAugment, tc.REProb = cfg.HFlip, cfg.ColorJitter, cfg.AutoAugment, cfg.ReProb
	pipeline, err := trainPipelines.lookup(cfg.Train)
	if err != nil {
		return trainP, evalP, err
	}
	tc.Crop = pipeline.crop
	pre := runPreprocessing(cfg)
	ec := augment.EvalConfig{Size: size, CropPct: pre.CropPct, Interp: pre.Interpolation, Mean: mean, Std: std}
	if !pipeline.augments {
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
