package optim

import "fmt"

// DefaultEMADecay is timm's --model-ema-decay default.
const DefaultEMADecay = 0.9998

// EMA keeps an exponential moving average of the parameters, like timm's
// ModelEmaV2: after each optimizer step, Update sets
// ema ← decay·ema + (1−decay)·p. The averages start as copies of the
// parameters.
type EMA struct {
	decay  float64
	params []Param
	shadow [][]float32
	sh     sharded
}

// NewEMA copies the current parameter values as the initial averages.
func NewEMA(params []Param, decay float64) (*EMA, error) {
	if !(decay >= 0 && decay <= 1) {
		return nil, fmt.Errorf("optim: EMA decay %g must be in [0, 1]", decay)
	}
	if err := checkParams(params); err != nil {
		return nil, err
	}
	e := &EMA{decay: decay, params: cloneParams(params), shadow: zeros(params)}
	for i, p := range params {
		copy(e.shadow[i], p.Data)
	}
	e.sh.init(sizes(params), e.updateUnit)
	return e, nil
}

// Decay returns the averaging factor.
func (e *EMA) Decay() float64 { return e.decay }

// Update folds the current parameter values into the averages.
func (e *EMA) Update() { e.sh.job.run() }

func (e *EMA) updateUnit(u int) {
	d, od := float32(e.decay), float32(1-e.decay)
	for _, s := range e.sh.part.unit(u) {
		avg, p := e.shadow[s.t][s.lo:s.hi], e.params[s.t].Data[s.lo:s.hi]
		p = p[:len(avg)]
		for i := range avg {
			avg[i] = d*avg[i] + od*p[i]
		}
	}
}

// Weights returns the averaged weights aligned with the parameters (live
// buffers, not copies).
func (e *EMA) Weights() [][]float32 { return e.shadow }

// StateTensors returns the averages named "ema.<param name>" (live
// buffers).
func (e *EMA) StateTensors() []Tensor { return stateTensors(EMAPrefix, e.params, e.shadow) }

// LoadState restores the averages from tensors named as StateTensors names
// them; other tensors without the "ema." prefix are ignored, and nothing
// changes unless all of them are valid.
func (e *EMA) LoadState(tensors []Tensor) error {
	_, err := loadState(tensors, EMAPrefix, e.StateTensors(), false)
	return err
}
