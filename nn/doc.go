// Package nn holds what every network shares: the forward Graph and the
// compiled training Step, and beneath them the ops (nn/ops), the
// memory-planned executor (nn/runner), the matrix products (nn/blas), the
// SIMD kernels (nn/vec) and one worker pool (nn/parallel).
//
// graph.go builds the forward Graph (images (B, C, H, W) in, logits
// (B, classes) out) and FreezeWeights; step.go the training Step (the
// loss differentiated, each parameter's gradient read); infer.go the one
// batched-inference runner (Inference) behind evaluation, logits files,
// predict and a teacher network.
package nn
