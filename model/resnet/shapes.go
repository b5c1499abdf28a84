package resnet

import "gorgonia.org/tensor"

// Shapes returns the names and shapes of the parameters and buffers New
// creates for cfg, in the order of Params and Buffers, without allocating
// or initialising them (every Value is nil): what a checkpoint of cfg must
// hold, checkable before building the model.
func Shapes(cfg BuildConfig) (params, buffers []Param, err error) {
	cfg = cfg.withDefaults()
	a, err := cfg.validate()
	if err != nil {
		return nil, nil, err
	}
	p := newPlan(a, cfg.Channels)
	for _, u := range p.units() {
		params = append(params,
			Param{Name: u.conv + ".weight", Shape: tensor.Shape{u.out, u.in, u.kernel, u.kernel}},
			Param{Name: u.bn + ".weight", Shape: tensor.Shape{u.out}},
			Param{Name: u.bn + ".bias", Shape: tensor.Shape{u.out}})
		buffers = append(buffers,
			Param{Name: u.bn + ".running_mean", Shape: tensor.Shape{u.out}},
			Param{Name: u.bn + ".running_var", Shape: tensor.Shape{u.out}})
	}
	params = append(params,
		Param{Name: "fc.weight", Shape: tensor.Shape{cfg.NumClasses, p.features}},
		Param{Name: "fc.bias", Shape: tensor.Shape{cfg.NumClasses}})
	return params, buffers, nil
}
