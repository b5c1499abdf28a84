package ops

import (
	"fmt"
	"hash"
	"math"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// SoftTargetCrossEntropy is timm's SoftTargetCrossEntropy: logits and
// targets are (B, C), each target row a distribution over the C classes
// (label smoothing and mixup already applied), and the scalar loss is
//
//	mean over B of −Σ_c t_c · log_softmax(z)_c.
//
// Its gradient flows to logits only: (softmax(z)·Σ_c t_c − t)/B.
func SoftTargetCrossEntropy(logits, targets *gorgonia.Node) (*gorgonia.Node, error) {
	return applyLoss(lossParams{kind: lossSoftTarget, tau: 1}, logits, targets)
}

// DistillKL is DeiT's soft distillation loss (facebookresearch/deit
// DistillationLoss, distillation_type 'soft'): with student and teacher
// logits (B, C) and temperature tau,
//
//	KL(softmax(teacher/τ) ‖ softmax(student/τ)) · τ² / (B·C),
//
// the KL divergence summed over the batch and the classes, as
// F.kl_div(log_softmax(s/τ), log_softmax(t/τ), reduction='sum',
// log_target=True) · τ² / s.numel(). With perBatch the sum is divided by B
// instead of B·C. Its gradient flows to student only.
func DistillKL(student, teacher *gorgonia.Node, tau float64, perBatch bool) (*gorgonia.Node, error) {
	if !(tau > 0) || math.IsInf(tau, 0) {
		return nil, fmt.Errorf("DistillKL: temperature %v is not a finite value > 0", tau)
	}
	return applyLoss(lossParams{kind: lossDistillKL, tau: tau, perBatch: perBatch}, student, teacher)
}

// HardDistillCE is DeiT's hard distillation loss: the cross-entropy of the
// student logits (B, C) against the teacher's argmax class (the first one on
// ties), averaged over B, without label smoothing. Its gradient flows to
// student only.
func HardDistillCE(student, teacher *gorgonia.Node) (*gorgonia.Node, error) {
	return applyLoss(lossParams{kind: lossHardDistill, tau: 1}, student, teacher)
}

type lossKind int

const (
	lossSoftTarget lossKind = iota
	lossDistillKL
	lossHardDistill
)

var lossNames = [...]string{"SoftTargetCrossEntropy", "DistillKL", "HardDistillCE"}

// lossParams selects a loss and its normalization.
type lossParams struct {
	kind     lossKind
	tau      float64
	perBatch bool
}

// norm is the factor applied to the sum of the row losses.
func (p lossParams) norm(b, c int) float64 {
	if p.kind == lossDistillKL && !p.perBatch {
		return 1 / float64(b*c)
	}
	return 1 / float64(b)
}

func (p lossParams) hash(h hash.Hash) { fmt.Fprint(h, p.kind, p.tau, p.perBatch) }

func applyLoss(p lossParams, z, t *gorgonia.Node) (*gorgonia.Node, error) {
	name := lossNames[p.kind]
	zs, ts := z.Shape(), t.Shape()
	if len(zs) != 2 || !zs.Eq(ts) || zs.TotalSize() == 0 {
		return nil, fmt.Errorf("%s: inputs %v and %v must both be (B, C) with B, C ≥ 1", name, zs, ts)
	}
	op := &lossOp{lossParams: p}
	op.base = base{name: name, arity: 2, params: p.hash}
	return gorgonia.ApplyOp(op, z, t)
}

// lossOp is the scalar loss of (z, t): z the logits being trained, t the
// targets or teacher logits. rows holds the row losses of the last run.
type lossOp struct {
	base
	lossParams
	rows []float64
	out  scalarOut
}

func (op *lossOp) Type() hm.Type { return fnType(0, 2, 2) }

func (op *lossOp) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	return tensor.ScalarShape(), nil
}

func (op *lossOp) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	dt, err := checkDtypes(op.name, in...)
	if err != nil {
		return nil, err
	}
	s := in[0].Shape()
	b, c := s[0], s[1]
	if cap(op.rows) < b {
		op.rows = make([]float64, b)
	}
	op.rows = op.rows[:b]
	if dt == tensor.Float32 {
		lossRows(op.lossParams, floats[float32](in[0]), floats[float32](in[1]), op.rows, c)
	} else {
		lossRows(op.lossParams, floats[float64](in[0]), floats[float64](in[1]), op.rows, c)
	}
	sum := 0.0
	for _, l := range op.rows {
		sum += l
	}
	return op.out.set(dt, sum*op.norm(b, c)), nil
}

// UsePreallocDo computes the scalar loss; scalars need no buffer.
func (op *lossOp) UsePreallocDo(_ gorgonia.Value, in ...gorgonia.Value) (gorgonia.Value, error) {
	return op.Do(in...)
}

func (op *lossOp) DiffWRT(int) []bool { return []bool{true, false} }

func (op *lossOp) SymDiff(inputs gorgonia.Nodes, _, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	g := &lossGrad{lossParams: op.lossParams}
	g.base = base{name: op.name + "Grad", arity: 3, params: op.lossParams.hash}
	dz, err := gorgonia.ApplyOp(g, grad, inputs[0], inputs[1])
	if err != nil {
		return nil, err
	}
	return gorgonia.Nodes{dz, nil}, nil
}

// lossGrad is dz = ∂loss/∂z · dloss, from (dloss, z, t).
type lossGrad struct {
	base
	lossParams
}

func (op *lossGrad) Type() hm.Type { return fnType(2, 0, 2, 2) }

func (op *lossGrad) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapeOf(in, 1)
	if err != nil {
		return nil, err
	}
	return s.Clone(), nil
}

func (op *lossGrad) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, in...)
}

func (op *lossGrad) UsePreallocDo(prealloc gorgonia.Value, in ...gorgonia.Value) (gorgonia.Value, error) {
	dt, err := checkDtypes(op.name, in...)
	if err != nil {
		return nil, err
	}
	s := in[1].Shape()
	b, c := s[0], s[1]
	scale := scalarOf(in[0]) * op.norm(b, c)
	out := output(prealloc, dt, s)
	if dt == tensor.Float32 {
		lossRowsGrad(op.lossParams, floats[float32](in[1]), floats[float32](in[2]), floats[float32](out), c, scale)
	} else {
		lossRowsGrad(op.lossParams, floats[float64](in[1]), floats[float64](in[2]), floats[float64](out), c, scale)
	}
	return out, nil
}
