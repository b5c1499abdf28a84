// Package gradcheck holds what the whole-model gradient checks share:
// float64 networks, whose analytic gradients are compared with central
// differences finer than float32 resolves, and those differences.
// Training, evaluation and every command build float32 networks only; the
// ops (nn/ops) are written for both, and a ViT's or a ResNet's graphs take
// their parameters' dtype, so a network whose parameters are converted
// (Float64) computes in float64 throughout.
package gradcheck

import (
	"fmt"

	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/model/vit"
	"github.com/vit-train/vit-train/nn"
)

// ViT returns the ViT of cfg initialised from seed as vit.New does, its
// parameters converted to float64: its graphs (BuildGraph) take float64
// images (ImageData is []float64) and compute float64 logits, losses and
// gradients.
func ViT(cfg vit.Config, seed uint64) (*vit.ViT, error) {
	m, err := vit.New(cfg, seed)
	if err != nil {
		return nil, err
	}
	for _, p := range m.Params {
		p.Value = Float64(p.Value)
	}
	return m, nil
}

// Float64 returns a float64 copy of t, a float32 tensor, of its shape.
func Float64(t *tensor.Dense) *tensor.Dense {
	f := t.Float32s()
	d := make([]float64, len(f))
	for i, v := range f {
		d[i] = float64(v)
	}
	return tensor.New(tensor.WithShape(t.Shape()...), tensor.WithBacking(d))
}

// Grad returns parameter i's gradient of s's last Run, shaped as the
// parameter and laid out row-major: the step's buffer, to read before the
// next Run. A step of a float32 graph is an error.
func Grad(s *nn.Step, i int) ([]float64, error) {
	if i < 0 || i >= len(s.Grads) {
		return nil, fmt.Errorf("gradcheck: gradient %d of %d", i, len(s.Grads))
	}
	d, ok := s.Value(s.Grads[i]).Data().([]float64)
	if !ok {
		return nil, fmt.Errorf("gradcheck: gradient %d is %v, not float64", i, s.Grads[i].Dtype())
	}
	return d, nil
}

// CentralDifference is the numeric derivative of loss with respect to
// x[i], (loss(x + eps·eᵢ) − loss(x − eps·eᵢ)) / 2eps, for x a float64
// parameter that loss reads; x[i] is restored after.
func CentralDifference(loss func() float64, x []float64, i int, eps float64) float64 {
	orig := x[i]
	x[i] = orig + eps
	plus := loss()
	x[i] = orig - eps
	minus := loss()
	x[i] = orig
	return (plus - minus) / (2 * eps)
}
