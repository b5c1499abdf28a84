package vit

// MACs is the number of multiply-accumulates of one image's forward pass
// through the model's matrix products (patch projection, qkv, q·kᵀ, P·v,
// attention projection, MLP, heads), the count fvcore and timm report as
// "FLOPs". Normalisation, softmax, GELU and additions are not counted.
func (c Config) MACs() int64 {
	t, d, m := int64(c.NumTokens()), int64(c.EmbedDim), int64(c.MLPDim)
	cpp := int64(c.Channels * c.PatchSize * c.PatchSize)
	total := int64(c.NumPatches()) * cpp * d
	block := t*d*3*d + 2*t*t*d + t*d*d + 2*t*d*m
	total += int64(c.Depth) * block
	heads := int64(1)
	if c.Distilled {
		heads = 2
	}
	total += heads * d * int64(c.NumClasses)
	return total
}

// ForwardFLOPs is 2·MACs: floating-point operations of one image's forward pass.
func (c Config) ForwardFLOPs() int64 { return 2 * c.MACs() }
