package train

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/vit-train/vit-train/augment"
	"github.com/vit-train/vit-train/comm"
	"github.com/vit-train/vit-train/data"
	"github.com/vit-train/vit-train/distill"
	"github.com/vit-train/vit-train/models"
	"github.com/vit-train/vit-train/nn"
)

// teacher supplies the teacher logits of each training batch for distillation.
type teacher interface {
	// fill writes the teacher's logits (B, C) into dst for a batch whose
	// images (B, C, H, W), already mixed as mix says, are images and whose
	// dataset items are indices (B).
	fill(images []float32, indices []int, mix augment.MixInfo, dst []float32) error
	// describe names the teacher for the run's log.
	describe() string
	// evaluate scores the teacher on the evaluation data; ok is false when
	// it cannot be run on images (logits from a file). A cancelled ctx
	// stops it with an error wrapping ctx.Err().
	evaluate(ctx context.Context, l *data.Loader) (res Result, ok bool, err error)
}

// newTeacher opens the teacher that cfg.Distill names, for a student that
// takes (channels, size) images of ds normalised with ds.Mean and ds.Std,
// trained with batches of batch images.
func newTeacher(cfg Config, student models.Network, ds *Datasets) (teacher, error) {
	d := cfg.Distill
	switch {
	case d.Type == "none":
		return nil, nil
	case d.TeacherLogits != "":
		return openLogitsTeacher(d.TeacherLogits, ds.Train.Len(), student.NumClasses())
	}
	ck, net, err := OpenNetwork(d.Teacher, false)
	if err != nil {
		return nil, fmt.Errorf("distill.teacher: %w", err)
	}
	bad := func(what string, teacherV, studentV any) error {
		return fmt.Errorf("distill.teacher %s: the teacher %s takes %s %v, the student %s %v", d.Teacher, net.Name(), what, teacherV, student.Name(), studentV)
	}
	tc, ts := net.Input()
	sc, ss := student.Input()
	switch {
	case net.NumClasses() != student.NumClasses():
		return nil, bad("classes", net.NumClasses(), student.NumClasses())
	case tc != sc:
		return nil, bad("channels", tc, sc)
	case ts != ss:
		return nil, bad("image size", ts, ss)
	case len(ck.Mean) > 0 && (!slices.Equal(ck.Mean, ds.Mean) || !slices.Equal(ck.Std, ds.Std)):
		return nil, bad("inputs normalised with mean/std", fmt.Sprint(ck.Mean, ck.Std), fmt.Sprint(ds.Mean, ds.Std))
	}
	nt := &netTeacher{path: d.Teacher, net: net}
	if nt.train, err = net.Graph(cfg.Data.BatchSize, false, nil); err != nil {
		return nil, err
	}
	if nt.images, err = nt.train.Float32Images(); err != nil {
		return nil, fmt.Errorf("distill.teacher %s: %w", d.Teacher, err)
	}
	if nt.eval, err = net.Graph(cfg.Data.EvalBatchSize, false, nil); err != nil {
		return nil, err
	}
	return nt, nil
}

// netTeacher is a checkpoint's model, run frozen: evaluation-mode graphs
// (batch norms use their running statistics and update nothing) whose
// parameters no optimiser sees.
type netTeacher struct {
	path        string
	net         models.Network
	train, eval *nn.Graph
	images      []float32 // train's input (B, C, H, W)
	logits      []float32
	comm        comm.Communicator // sums the evaluation across the ranks; nil: one process
}

func (t *netTeacher) fill(images []float32, _ []int, _ augment.MixInfo, dst []float32) error {
	if len(images) != len(t.images) {
		return fmt.Errorf("teacher %s: a batch of %d values, the teacher's graph takes %d", t.path, len(images), len(t.images))
	}
	copy(t.images, images)
	if err := t.train.Run(); err != nil {
		return fmt.Errorf("teacher %s: %w", t.path, err)
	}
	t.logits = t.train.Predictions(t.logits)
	copy(dst, t.logits)
	return nil
}

func (t *netTeacher) describe() string { return fmt.Sprintf("%s from %s", t.net.Name(), t.path) }

func (t *netTeacher) evaluate(ctx context.Context, l *data.Loader) (Result, bool, error) {
	ev, err := evaluateAcross(ctx, t.comm, t.eval, l)
	return ev.Result, true, err
}

// logitsTeacher is teacher logits read from a .npy file, one row per
// training item. With Mixup or CutMix, image i of a batch is mixed with
// image B−1−i with weight λ, and its teacher logits are mixed the same way:
// the teacher saw the un-augmented images, so this is an approximation of
// DeiT, which runs the teacher on the mixed batch.
type logitsTeacher struct {
	path string
	data []float32
	n, c int
}

// openLogitsTeacher reads the (n, classes) float32 logits at path.
func openLogitsTeacher(path string, n, classes int) (*logitsTeacher, error) {
	d, shape, err := distill.ReadNPY(path)
	if err != nil {
		return nil, fmt.Errorf("distill.teacher_logits: %w", err)
	}
	if len(shape) != 2 {
		return nil, fmt.Errorf("distill.teacher_logits %s: shape %v, want (N, C) = (%d, %d)", path, shape, n, classes)
	}
	if shape[0] != n {
		return nil, fmt.Errorf("distill.teacher_logits %s: N = %d rows, but the training set has %d items (write the file with vit-train logits and the run's data settings)", path, shape[0], n)
	}
	if shape[1] != classes {
		return nil, fmt.Errorf("distill.teacher_logits %s: C = %d columns, but the model has %d classes", path, shape[1], classes)
	}
	return &logitsTeacher{path: path, data: d, n: n, c: classes}, nil
}

func (t *logitsTeacher) fill(_ []float32, indices []int, mix augment.MixInfo, dst []float32) error {
	c := t.c
	for i, idx := range indices {
		if idx < 0 || idx >= t.n {
			return fmt.Errorf("distill.teacher_logits %s: item %d is out of its %d rows", t.path, idx, t.n)
		}
		copy(dst[i*c:(i+1)*c], t.data[idx*c:(idx+1)*c])
	}
	if mix.Lam == 1 {
		return nil
	}
	lam := float32(mix.Lam)
	b := len(indices)
	for i := 0; i < b/2; i++ {
		j := b - 1 - i
		zi, zj := dst[i*c:(i+1)*c], dst[j*c:(j+1)*c]
		for k := range zi {
			a, o := zi[k], zj[k]
			zi[k] = lam*a + (1-lam)*o
			zj[k] = lam*o + (1-lam)*a
		}
	}
	return nil
}

func (t *logitsTeacher) describe() string { return "logits from " + t.path }

func (t *logitsTeacher) evaluate(context.Context, *data.Loader) (Result, bool, error) {
	return Result{Top1: math.NaN()}, false, nil
}
