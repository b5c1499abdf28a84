// Package distill is DeiT distillation (Touvron et al., 2021;
// facebookresearch/deit): its configuration (Config), the training loss
// of every run, distilled or not (NewTrainingLoss: soft-target
// cross-entropy, plus a distillation term on the distillation head when
// distilling) and the teachers that supply logits for each batch: a
// frozen network (NetTeacher) or logits computed once and read from a
// NumPy .npy file (LogitsTeacher). The loss kernels themselves are
// nn/ops.DistillKL and nn/ops.HardDistillCE.
package distill
