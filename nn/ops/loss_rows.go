package ops

import "math"

// Per-row math of the losses, in float64 whatever the dtype (the logits are
// only (B, C), so exactness costs nothing). z is a row of the logits being
// trained, t the matching row of targets or teacher logits.

// lossRows sets rows[b] to the unnormalized loss of row b of z, t (B, c).
func lossRows[T Float](p lossParams, z, t []T, rows []float64, c int) {
	parallelRows(len(rows), c, lossRowsOf[T]{p: p, z: z, t: t, rows: rows, c: c})
}

// lossRowsGrad sets dz to scale times the gradient of each row loss.
func lossRowsGrad[T Float](p lossParams, z, t, dz []T, c int, scale float64) {
	parallelRows(len(z)/c, c, lossRowsOf[T]{p: p, z: z, t: t, dz: dz, c: c, scale: scale})
}

// lossRowsOf computes the rows' losses into rows or, when dz is set, their
// gradients times scale into dz.
type lossRowsOf[T Float] struct {
	p        lossParams
	z, t, dz []T
	rows     []float64
	c        int
	scale    float64
}

func (k *lossRowsOf[T]) Range(lo, hi int) {
	c := k.c
	for r := lo; r < hi; r++ {
		z, t := k.z[r*c:(r+1)*c], k.t[r*c:(r+1)*c]
		if k.dz != nil {
			lossRowGrad(k.p, z, t, k.dz[r*c:(r+1)*c], k.scale)
		} else {
			k.rows[r] = lossRow(k.p, z, t)
		}
	}
}

// lossRow returns one row's loss:
//
//	soft target:  Σ t·(lse(z) − z)
//	KL:           τ² Σ q·(log q − log p),  q = softmax(t/τ), p = softmax(z/τ)
//	hard distill: lse(z) − z_k,  k = argmax t
func lossRow[T Float](p lossParams, z, t []T) float64 {
	switch p.kind {
	case lossSoftTarget:
		lse := logSumExp(z, 1)
		s := 0.0
		for i, ti := range t {
			s += float64(ti) * (lse - float64(z[i]))
		}
		return s
	case lossDistillKL:
		a := 1 / p.tau
		lz, lt := logSumExp(z, a), logSumExp(t, a)
		s := 0.0
		for i, ti := range t {
			logQ := a*float64(ti) - lt
			s += math.Exp(logQ) * (logQ - (a*float64(z[i]) - lz))
		}
		return p.tau * p.tau * s
	default:
		return logSumExp(z, 1) - float64(z[argMax(t)])
	}
}

// lossRowGrad sets dz = scale·∂lossRow/∂z:
//
//	soft target:  softmax(z)·Σt − t
//	KL:           τ·(p − q)
//	hard distill: softmax(z) − onehot(k)
func lossRowGrad[T Float](p lossParams, z, t, dz []T, scale float64) {
	switch p.kind {
	case lossSoftTarget:
		lse, sumT := logSumExp(z, 1), sumF64(t)
		for i, zi := range z {
			dz[i] = T(scale * (math.Exp(float64(zi)-lse)*sumT - float64(t[i])))
		}
	case lossDistillKL:
		a := 1 / p.tau
		lz, lt := logSumExp(z, a), logSumExp(t, a)
		for i, zi := range z {
			dz[i] = T(scale * p.tau * (math.Exp(a*float64(zi)-lz) - math.Exp(a*float64(t[i])-lt)))
		}
	default:
		lse, k := logSumExp(z, 1), argMax(t)
		for i, zi := range z {
			g := math.Exp(float64(zi) - lse)
			if i == k {
				g--
			}
			dz[i] = T(scale * g)
		}
	}
}

// logSumExp returns log Σ e^(a·x) for a > 0, with the maximum factored out.
func logSumExp[T Float](x []T, a float64) float64 {
	m := a * float64(maxOf(x))
	s := 0.0
	for _, v := range x {
		s += math.Exp(a*float64(v) - m)
	}
	return m + math.Log(s)
}

// argMax returns the index of the first largest element of a non-empty x.
func argMax[T Float](x []T) int {
	k := 0
	for i, v := range x {
		if v > x[k] {
			k = i
		}
	}
	return k
}
