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
	_ Optimizer   = (*AdamW)(nil)
	_ Optimizer   = (*SGD)(nil)
	_ RowReporter = (*AdamW)(nil)
)

// RowReporter is an optimizer that reports the rows of the parameters it
// has just updated, so that copies of them (a layer's weights packed for
// its matrix products) can be brought up to date while the new values
// are still in cache.
type RowReporter interface {
	// ReportRows makes every later step call updated(param, r0, r1) once
	// it has written rows [r0, r1) of a parameter's values, as rows of
	// rowLen[param] values (0: none of them reported), r0 and r1
	// multiples of align[param] rows or r1 the last row, on the goroutine
	// that wrote them. Calls for different rows may run at once; every
	// row of a reported parameter is reported once a step.
	ReportRows(rowLen, align []int, updated func(param, r0, r1 int)) error
}
