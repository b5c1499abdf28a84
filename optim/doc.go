// Package optim updates vit-train's parameters: AdamW and SGD (PyTorch
// formulas), timm's parameter groups (no weight decay for 1-D tensors and
// tokens, layer-wise learning-rate decay), global-norm gradient clipping,
// learning-rate schedules, gradient accumulation and an exponential moving
// average of the weights.
//
// Everything works on plain []float32 slices: a parameter is a Param whose
// Data is the model's own weight buffer, updated in place. Optimizer state
// is allocated once when an optimizer is built; Step, Clip, Add and Update
// do not allocate and spread large models over all cores in work units of
// about 32K elements. None of the types is safe for concurrent use.
//
// Optimizer, EMA state and step count are exported as named Tensors
// ("optim.step", "optim.exp_avg.<param>", "optim.exp_avg_sq.<param>",
// "optim.momentum_buffer.<param>", "ema.<param>") so that checkpoints can
// store them next to the weights.
package optim
