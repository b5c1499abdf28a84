// Package interop moves ViT and DeiT weights between vit-train and other
// frameworks:
//
//   - timm (PyTorch) state dicts saved as safetensors, whose names and
//     layouts vit-train's parameters already follow (vit.Config.ParamSpecs);
//   - Google's ViT checkpoints (vit_jax) saved as .npz, converted
//     to timm's layout as timm's _load_weights does.
//
// Import reads either, infers the architecture from the tensor shapes (embed
// dim, depth, patch size, channels, grid, classes, MLP dim, qkv bias,
// distillation token) and takes the rest from Hints. The imported
// parameters are in timm's names, layouts and order, so a network's
// tensors written as safetensors (vit-train export) are a state dict that
// timm's VisionTransformer.load_state_dict accepts as it is.
package interop
