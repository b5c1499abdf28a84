package train

import (
	"github.com/vit-train/vit-train/augment"
	"github.com/vit-train/vit-train/data"
	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/nn"
)

// EvalOptions say how OpenEval prepares a checkpoint's network.
type EvalOptions struct {
	Sets      []string // key=value overrides of the checkpoint's run configuration, as --set
	Batch     int      // > 0 overrides data.eval_batch_size
	EMA       bool     // run the EMA weights instead of the trained ones
	ImageSize int      // > 0 runs at another input size (a ViT's pos_embed resampled)
	TrainData bool     // run over the training split instead of the evaluation split
}

// EvalRun is a checkpoint's network ready to run over one split of its
// data through the evaluation pipeline: what eval and logits share.
type EvalRun struct {
	Checkpoint *Checkpoint
	Net        model.Network
	Config     Config    // the checkpoint's run configuration with the overrides applied
	Data       *Datasets // the datasets Config names
	Items      data.Dataset
	Loader     *data.Loader // Items in order, batches of Config.Data.EvalBatchSize
	Graph      *nn.Graph    // the evaluation graph, batch Config.Data.EvalBatchSize, weights frozen
	// Note says what was changed to run at ImageSize; empty otherwise.
	Note string
}

// OpenEval opens the checkpoint at path, builds its network from the spec
// it carries (a ViT, a DeiT or a ResNet, whatever its name), opens the data
// of its run configuration with o.Sets applied, and sets up the loader
// (normalised with the checkpoint's mean and std, or the data's when it
// records none) and the evaluation graph.
func OpenEval(path string, o EvalOptions) (*EvalRun, error) {
	ck, net, err := OpenNetwork(path, o.EMA)
	if err != nil {
		return nil, err
	}
	r := &EvalRun{Checkpoint: ck, Net: net, Config: DefaultConfig()}
	if _, size := net.Spec().Input(); o.ImageSize > 0 && o.ImageSize != size {
		if r.Net, r.Note, err = model.Resized(net, o.ImageSize); err != nil {
			return nil, err
		}
	}
	if ck.Config != nil {
		r.Config = *ck.Config
	}
	if r.Config, err = Override(r.Config, o.Sets); err != nil {
		return nil, err
	}
	if o.Batch > 0 {
		r.Config.Data.EvalBatchSize = o.Batch
	}
	if err := r.Config.Model.ApplyPrecision(r.Net); err != nil {
		return nil, err
	}
	if r.Data, err = OpenDatasets(r.Config.Data); err != nil {
		return nil, err
	}
	if err := r.Data.CheckModel(r.Net.Spec()); err != nil {
		return nil, err
	}
	r.Items = r.Data.Eval
	if o.TrainData {
		r.Items = r.Data.Train
	}
	mean, std := normalisation(ck, r.Data)
	_, size := r.Net.Spec().Input()
	_, evalP, err := Pipelines(r.Config.Aug, size, mean, std)
	if err != nil {
		return nil, err
	}
	batch := r.Config.Data.EvalBatchSize
	if r.Loader, err = data.NewLoader(data.LoaderConfig{Dataset: r.Items, BatchSize: batch, Workers: r.Config.Data.Workers, Pipeline: evalP}); err != nil {
		return nil, err
	}
	if r.Graph, err = r.Net.Graph(batch, false, nil); err != nil {
		return nil, err
	}
	// The checkpoint's weights stay as loaded for the whole run.
	if err := r.Graph.FreezeWeights(); err != nil {
		return nil, err
	}
	return r, nil
}

// normalisation is the mean and std a checkpoint's images are normalised
// with: the checkpoint's, or the data's when it records none.
func normalisation(ck *Checkpoint, d *Datasets) (mean, std []float32) {
	if len(ck.Mean) == 0 {
		return d.Mean, d.Std
	}
	return ck.Mean, ck.Std
}

// EvalPipelineOf is the evaluation pipeline (resize, crop, normalisation)
// that eval, logits and predict feed the checkpoint's network of input
// size through: the aug settings of the checkpoint's run configuration (or
// the defaults), and its mean and std, or, when it records none, those of
// the data that configuration names (which are then opened).
func EvalPipelineOf(ck *Checkpoint, size int) (augment.Pipeline, error) {
	cfg := DefaultConfig()
	if ck.Config != nil {
		cfg = *ck.Config
	}
	var d *Datasets
	if len(ck.Mean) == 0 {
		var err error
		if d, err = OpenDatasets(cfg.Data); err != nil {
			return augment.Pipeline{}, err
		}
	}
	mean, std := normalisation(ck, d)
	_, evalP, err := Pipelines(cfg.Aug, size, mean, std)
	return evalP, err
}
