package nn

import "fmt"

// Inference runs an evaluation graph's forward pass on batch after batch
// of images: float32 images (B, C, H, W) in, inference logits (B, classes)
// out (Graph.Predictions: the class head, or the mean of both heads of a
// distilled model). Evaluation, logits files, predict and a teacher
// network all run their batches through one. A batch of fewer than B
// images is padded with zeros, and only its own rows are returned.
type Inference struct {
	g      *Graph
	images []float32 // the graph's input (B, C, H, W)
	logits []float32 // the last batch's logits (B, classes)
	per    int       // values per image, C·H·W
}

// NewInference wraps an evaluation graph of float32 images. It does not
// freeze the graph: a caller whose weights no longer change freezes it
// first (Graph.FreezeWeights).
func NewInference(g *Graph) (*Inference, error) {
	if g.Training {
		return nil, fmt.Errorf("nn: inference needs an evaluation graph, not a training graph")
	}
	images, err := g.Float32Images()
	if err != nil {
		return nil, err
	}
	return &Inference{g: g, images: images, per: len(images) / g.Batch}, nil
}

// Graph is the graph each Run runs; after a Run, its heads' values
// (Graph.HeadLogits) are the last batch's.
func (in *Inference) Graph() *Graph { return in.g }

// Batch is B, the most images one Run takes.
func (in *Inference) Batch() int { return in.g.Batch }

// ImageSize is the number of values of one image, C·H·W.
func (in *Inference) ImageSize() int { return in.per }

// Run writes n ≤ B images into the graph's input through fill, which gets
// the first n·C·H·W values to fill (the rest of the batch is zeroed), runs
// the graph and returns the n rows of inference logits (n, classes), valid
// until the next Run.
func (in *Inference) Run(n int, fill func(images []float32) error) ([]float32, error) {
	if n < 0 || n > in.g.Batch {
		return nil, fmt.Errorf("nn: a batch of %d images, the graph takes at most %d", n, in.g.Batch)
	}
	k := n * in.per
	if err := fill(in.images[:k]); err != nil {
		return nil, err
	}
	clear(in.images[k:])
	if err := in.g.Run(); err != nil {
		return nil, err
	}
	in.logits = in.g.Predictions(in.logits)
	return in.logits[:n*in.g.Logits.Shape()[1]], nil
}
