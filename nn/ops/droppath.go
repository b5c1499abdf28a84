package ops

import "gorgonia.org/gorgonia"

// DropPath is stochastic depth, timm's drop_path(x, p, training=True): x is
// (B, ...), and each of the B samples is kept whole with probability 1−p and
// scaled by 1/(1−p), or zeroed whole. The result is shaped like x. The
// decisions come from r (see Randomness); the backward applies the same ones
// to dy. p = 0 returns x itself.
func DropPath(x *gorgonia.Node, p float64, r *Randomness) (*gorgonia.Node, error) {
	return applyMask("DropPath", x, p, r, true)
}
