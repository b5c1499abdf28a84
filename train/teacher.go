package train

import (
	"context"
	"fmt"

	"github.com/vit-train/vit-train/distill"
	"github.com/vit-train/vit-train/model"
)

// openTeacher opens the teacher that cfg.Distill names, for a student that
// takes the images of ds: nil without distillation, a distill.LogitsTeacher
// for distill.teacher_logits, else the checkpoint distill.teacher as a
// distill.NetTeacher.
func openTeacher(cfg Config, student model.Network, ds *Datasets) (distill.Teacher, error) {
	d := cfg.Distill
	switch {
	case !d.Distilling():
		return nil, nil
	case d.TeacherLogits != "":
		lt, err := distill.OpenLogitsTeacher(d.TeacherLogits, ds.Train.Len(), student.Spec().NumClasses())
		if err != nil {
			return nil, err
		}
		return lt, nil
	}
	// The teacher's forward pass runs in the student run's precision.
	ck, net, err := OpenNetwork(d.Teacher, NetworkOptions{Model: &cfg.Model})
	if err != nil {
		return nil, fmt.Errorf("distill.teacher: %w", err)
	}
	if err := ds.CheckClassNames("distill.teacher "+d.Teacher, ck.Classes); err != nil {
		return nil, err
	}
	// Its inputs must be normalised as the student's: the teacher's own
	// normalisation, or the student's data's when its checkpoint records none.
	_, size := net.Spec().Input()
	pre, err := ck.EvalPreprocessing(size, PreprocessOverrides{}, ds)
	if err != nil {
		return nil, fmt.Errorf("distill.teacher %s: %w", d.Teacher, err)
	}
	nt, err := distill.NewNetTeacher(distill.NetTeacherSpec{
		Path: d.Teacher, Net: net, Mean: pre.Mean, Std: pre.Std,
		Student: student, StudentMean: ds.Mean, StudentStd: ds.Std,
		TrainBatch: cfg.Data.BatchSize, EvalBatch: cfg.Data.EvalBatchSize,
	})
	if err != nil {
		return nil, err
	}
	return nt, nil
}

// evaluateTeacher scores the teacher on the evaluation data, once, summed
// across the ranks, and prints it; a teacher read from a logits file has
// no score.
func (t *trainer) evaluateTeacher(ctx context.Context) error {
	if t.teacher == nil {
		return nil
	}
	d := t.cfg.Distill
	line := fmt.Sprintf("distillation %s (alpha %g, tau %g) from %s", d.Type, d.Alpha, d.Tau, t.teacher.Describe())
	if nt, ok := t.teacher.(*distill.NetTeacher); ok {
		ev, err := t.eval.across(ctx, nt.EvalGraph())
		if err != nil {
			return fmt.Errorf("evaluating the teacher: %w", err)
		}
		t.rec.teacher = &ev.Result
		line += fmt.Sprintf(": teacher top-1 %.2f%%", ev.Result.Top1)
	}
	fmt.Fprintln(t.opts.Out, line)
	return nil
}
