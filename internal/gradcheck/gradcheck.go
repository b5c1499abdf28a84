// Package gradcheck holds the float64 networks of the whole-model gradient
// checks, which compare the analytic gradients with central differences
// finer than float32 resolves. Training, evaluation and every command
// build float32 networks only; the ops (nn/ops) are written for both, so a
// ViT whose parameters are float64 builds float64 graphs throughout.
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
		f := p.Float32s()
		d := make([]float64, len(f))
		for i, v := range f {
			d[i] = float64(v)
		}
		p.Value = tensor.New(tensor.WithShape(p.Value.Shape()...), tensor.WithBacking(d))
	}
	return m, nil
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
