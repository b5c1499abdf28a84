package vit

// MACs is the number of multiply-accumulates of one image's forward pass
// through the model's matrix products (patch projection, qkv, q·kᵀ, P·v,
// attention projection, MLP, heads), the count fvcore and timm report as
// "FLOPs". Normalisation, softmax, GELU and additions are not counted.
func (c Config) MACs() int64 { return c.macsWithLastRows(c.NumTokens()) }

// macsWithLastRows is MACs for a graph whose last block computes the
// rows of its first rows tokens only (see NewPrefixAttentionAs): qkv for
// every token, the rest of the block for those rows.
func (c Config) macsWithLastRows(rows int) int64 {
	t, d, m, r := int64(c.NumTokens()), int64(c.EmbedDim), int64(c.MLPDim), int64(rows)
	cpp := int64(c.Channels * c.PatchSize * c.PatchSize)
	total := int64(c.NumPatches()) * cpp * d
	block := func(r int64) int64 { return t*d*3*d + 2*r*t*d + r*d*d + 2*r*d*m }
	total += int64(c.Depth-1)*block(t) + block(r)
	heads := int64(1)
	if c.Distilled {
		heads = 2
	}
	total += heads * d * int64(c.NumClasses)
	return total
}

// ForwardFLOPs is 2·MACs: floating-point operations of one image's forward pass.
func (c Config) ForwardFLOPs() int64 { return 2 * c.MACs() }
