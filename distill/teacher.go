package distill

import (
	"fmt"
	"slices"

	"github.com/vit-train/vit-train/augment"
	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/nn"
)

// Teacher supplies the teacher logits of each training batch.
type Teacher interface {
	// Fill writes the teacher's logits (B, classes) into dst for a batch
	// whose images (B, C, H, W), already mixed as mix says, are images and
	// whose dataset items are indices (B).
	Fill(images []float32, indices []int, mix augment.MixInfo, dst []float32) error
	// Describe names the teacher for the run's log.
	Describe() string
}

// NetTeacherSpec is a teacher network and the student it teaches.
type NetTeacherSpec struct {
	Path string        // the checkpoint the teacher came from, for messages
	Net  model.Network // the teacher
	// Mean and Std are the per-channel normalisation the teacher was
	// trained with; empty when its checkpoint does not record it.
	Mean, Std               []float32
	Student                 model.Network
	StudentMean, StudentStd []float32
	// TrainBatch and EvalBatch are the batch sizes of the training and
	// evaluation graphs.
	TrainBatch, EvalBatch int
}

// NetTeacher is a network run frozen: evaluation-mode graphs (batch norms
// use their running statistics and update nothing) whose parameters no
// optimiser sees.
type NetTeacher struct {
	path  string
	net   model.Network
	train *nn.Inference // the graph Fill runs, its weights frozen
	eval  *nn.Graph
}

// NewNetTeacher checks that s.Net takes the student's inputs (classes,
// channels, image size and normalisation) and builds its graphs. Errors
// name s.Path and both values.
func NewNetTeacher(s NetTeacherSpec) (*NetTeacher, error) {
	bad := func(what string, teacherV, studentV any) error {
		return fmt.Errorf("distill.teacher %s: the teacher %s takes %s %v, the student %s %v", s.Path, s.Net.Spec().Name(), what, teacherV, s.Student.Spec().Name(), studentV)
	}
	tc, ts := s.Net.Spec().Input()
	sc, ss := s.Student.Spec().Input()
	switch {
	case s.Net.Spec().NumClasses() != s.Student.Spec().NumClasses():
		return nil, bad("classes", s.Net.Spec().NumClasses(), s.Student.Spec().NumClasses())
	case tc != sc:
		return nil, bad("channels", tc, sc)
	case ts != ss:
		return nil, bad("image size", ts, ss)
	case len(s.Mean) > 0 && (!slices.Equal(s.Mean, s.StudentMean) || !slices.Equal(s.Std, s.StudentStd)):
		return nil, bad("inputs normalised with mean/std", fmt.Sprint(s.Mean, s.Std), fmt.Sprint(s.StudentMean, s.StudentStd))
	}
	t := &NetTeacher{path: s.Path, net: s.Net}
	g, err := s.Net.Graph(s.TrainBatch, false, nil)
	if err != nil {
		return nil, err
	}
	// Run on every training step with weights that never change; the
	// evaluation graph, run once, packs them as it goes instead.
	if err = g.FreezeWeights(); err != nil {
		return nil, err
	}
	if t.train, err = nn.NewInference(g); err != nil {
		return nil, fmt.Errorf("distill.teacher %s: %w", s.Path, err)
	}
	if t.eval, err = s.Net.Graph(s.EvalBatch, false, nil); err != nil {
		return nil, err
	}
	return t, nil
}

// Fill runs the teacher on images; indices and mix are not needed, as
// the images are already mixed.
func (t *NetTeacher) Fill(images []float32, _ []int, _ augment.MixInfo, dst []float32) error {
	if want := t.train.Batch() * t.train.ImageSize(); len(images) != want {
		return fmt.Errorf("teacher %s: a batch of %d values, the teacher's graph takes %d", t.path, len(images), want)
	}
	logits, err := t.train.Run(t.train.Batch(), func(dst []float32) error {
		copy(dst, images)
		return nil
	})
	if err != nil {
		return fmt.Errorf("teacher %s: %w", t.path, err)
	}
	copy(dst, logits)
	return nil
}

// Describe is the teacher's model name and checkpoint.
func (t *NetTeacher) Describe() string { return fmt.Sprintf("%s from %s", t.net.Spec().Name(), t.path) }

// TrainGraph is the graph Fill runs, (TrainBatch, C, H, W) images to
// (TrainBatch, classes) logits, its weights frozen.
func (t *NetTeacher) TrainGraph() *nn.Graph { return t.train.Graph() }

// EvalGraph is the teacher's evaluation graph, (EvalBatch, C, H, W) images
// to (EvalBatch, classes) logits, for scoring it on the evaluation data.
func (t *NetTeacher) EvalGraph() *nn.Graph { return t.eval }

// Net is the teacher network.
func (t *NetTeacher) Net() model.Network { return t.net }
