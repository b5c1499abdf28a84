package train

import (
	"fmt"

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
	// Preprocess overrides the checkpoint's evaluation preprocessing.
	Preprocess PreprocessOverrides
}

// EvalRun is a checkpoint's network ready to run over one split of its
// data through the evaluation pipeline: what eval and logits share.
type EvalRun struct {
	Checkpoint *Checkpoint
	Net        model.Network
	Config     Config    // the checkpoint's run configuration with the overrides applied
	Data       *Datasets // the datasets Config names
	Items      data.Dataset
	// Eval is the checkpoint's evaluation preprocessing
	// (Checkpoint.EvalPreprocessing), what Loader runs the items through.
	Eval   augment.EvalConfig
	Loader *data.Loader // Items in order, batches of Config.Data.EvalBatchSize
	Graph  *nn.Graph    // the evaluation graph, batch Config.Data.EvalBatchSize, weights frozen
	// Note says what was changed to run at ImageSize; empty otherwise.
	Note string
}

// OpenEval opens the checkpoint at path, builds its network from the spec
// it carries (a ViT, a DeiT or a ResNet, whatever its name) in the
// precision of its run configuration with o.Sets applied, opens the data
// of that configuration, and sets up the loader (through the checkpoint's
// evaluation preprocessing, Checkpoint.EvalPreprocessing) and the
// evaluation graph.
func OpenEval(path string, o EvalOptions) (*EvalRun, error) {
	ck, err := LoadCheckpoint(path)
	if err != nil {
		return nil, err
	}
	r := &EvalRun{Checkpoint: ck, Config: DefaultConfig()}
	if ck.Config != nil {
		r.Config = *ck.Config
	}
	base := r.Config
	if r.Config, err = evalConfig(r.Config, o.Sets); err != nil {
		return nil, err
	}
	if r.Config.Aug.CropPct != base.Aug.CropPct {
		return nil, fmt.Errorf("aug.crop_pct: evaluation takes the checkpoint's preprocessing, not its run configuration's; change the crop fraction with --crop-pct")
	}
	if o.Batch > 0 {
		r.Config.Data.EvalBatchSize = o.Batch
	}
	if r.Net, r.Note, err = ck.Network(NetworkOptions{EMA: o.EMA, ImageSize: o.ImageSize, Model: &r.Config.Model}); err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	if r.Data, err = OpenDatasets(r.Config.Data); err != nil {
		return nil, err
	}
	if err := r.Data.CheckModel(r.Net.Spec()); err != nil {
		return nil, err
	}
	if err := r.Data.CheckClassNames("checkpoint "+path, ck.Classes); err != nil {
		return nil, err
	}
	r.Items = r.Data.Eval
	if o.TrainData {
		r.Items = r.Data.Train
	}
	_, size := r.Net.Spec().Input()
	if r.Eval, err = ck.EvalPreprocessing(size, o.Preprocess, r.Data); err != nil {
		return nil, err
	}
	evalP, err := augment.EvalPipeline(r.Eval)
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

// evalConfig applies key=value settings to a checkpoint's run
// configuration c, for evaluating it on other data: keys and values are
// checked as for training, but settings that only a training run would
// ignore are not refused.
func evalConfig(c Config, sets []string) (Config, error) {
	if len(sets) == 0 {
		return c, nil
	}
	out, err := c.Layer("", sets)
	if err != nil {
		return c, err
	}
	return out, out.validateValues()
}
