// Package distill is DeiT distillation (Touvron et al., 2021;
// facebookresearch/deit): its configuration (Config) and the teachers
// that supply logits for each batch: a frozen network (NetTeacher) or
// logits computed once and read from a NumPy .npy file (LogitsTeacher).
// The loss of every run, distilled or not, is train's (train/loss.go);
// its distillation kernels are nn/ops.DistillKL and nn/ops.HardDistillCE.
package distill
