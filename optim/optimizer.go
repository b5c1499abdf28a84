package optim

// Optimizer updates parameters in place from their gradients.
type Optimizer interface {
	// Step applies one update with learning rate lr (scaled per group by
	// LRScale); grads[i] is the gradient of the i-th parameter.
	Step(lr float64, grads [][]float32) error
	// StepScaled is Step from the gradients multiplied by gradScale (each
	// product rounded to float32), without changing grads: Step is
	// StepScaled with 1. Clipper.NormScale gives the factor that makes it
	// Clip followed by Step, bit for bit, one pass over the gradients
	// fewer.
	StepScaled(lr float64, gradScale float32, grads [][]float32) error
	// StepCount is the number of steps taken (restored by LoadState).
	StepCount() int
	// StateTensors returns the optimizer state, sharing the live buffers:
	// the data stays valid until the next Step or LoadState.
	StateTensors() []Tensor
	// LoadState replaces the state with copies of tensors named as
	// StateTensors names them; other tensors without the "optim." prefix
	// are ignored.
	LoadState(tensors []Tensor) error
}

var (
	_ Optimizer = (*AdamW)(nil)
	_ Optimizer = (*SGD)(nil)
)
