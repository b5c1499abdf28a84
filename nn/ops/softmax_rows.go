package ops

import (
	"math"

	"github.com/vit-train/vit-train/nn/parallel"
	"github.com/vit-train/vit-train/nn/vec"
)

// Row kernels of the softmax family, for the Softmax and LogSoftmax ops, the
// losses and any op that normalizes rows of its own buffers (attention
// scores). Each works on a tensor of R rows of n contiguous elements, R·n =
// len(x), spreads the rows over all cores with parallel.For, subtracts each
// row's maximum before exponentiating (finite for any finite logits), and
// uses the SIMD kernels of package vec in float32 (vec.Exp32's accuracy,
// sums in float32) and math.Exp with float64 sums in float64. The
// single-row forms run on the calling goroutine, for callers that are
// already parallel.

// rowsWorkGrain is the number of elements below which a worker is not worth starting.
const rowsWorkGrain = 1 << 14

// parallelRows runs body over [0, rows) like parallel.Loop, with enough
// rows per worker that each gets at least rowsWorkGrain elements of
// n-element rows.
func parallelRows[B any, P parallel.Body[B]](rows, n int, body B) {
	parallel.Loop[B, P](rows, max(1, rowsWorkGrain/max(n, 1)), body)
}

// SoftmaxRow sets out[:len(x)] to softmax(x). out may be x itself.
func SoftmaxRow[T Float](x, out []T) {
	if len(x) == 0 {
		return
	}
	if x32, ok := any(x).([]float32); ok {
		vec.Softmax(any(out).([]float32), x32)
		return
	}
	out = out[:len(x)]
	inv := T(1 / expShift(x, out, maxOf(x)))
	for i := range out {
		out[i] *= inv
	}
}

// softmaxEachRow applies SoftmaxRow to rows rows of n elements of x,
// ld apart (row r at x[r·ld:]), writing out's likewise, on the calling
// goroutine, for callers already spread over the cores; out may be x
// itself. In float32 one call of vec.SoftmaxRows does every row.
func softmaxEachRow[T Float](x, out []T, rows, n, ld int) {
	if x32, ok := any(x).([]float32); ok {
		vec.SoftmaxRows(any(out).([]float32), x32, rows, n, ld)
		return
	}
	for r := range rows {
		SoftmaxRow(x[r*ld:r*ld+n], out[r*ld:r*ld+n])
	}
}

// LogSoftmaxRow sets out[:len(x)] to log(softmax(x)) = x − max − log Σ e^(x−max).
// out may be x itself.
func LogSoftmaxRow[T Float](x, out []T) {
	if len(x) == 0 {
		return
	}
	if x32, ok := any(x).([]float32); ok {
		o32 := any(out).([]float32)
		m := vec.Max(x32)
		lse := float32(math.Log(sumExpShift(x32, m)))
		vec.AddConst(o32, x32, -m)
		vec.AddConst(o32, o32, -lse)
		return
	}
	m := maxOf(x)
	lse := T(math.Log(sumExpShift(x, m)))
	out = out[:len(x)]
	for i, v := range x {
		out[i] = v - m - lse
	}
}

// SoftmaxRows applies SoftmaxRow to each n-element row of x (R, n), writing
// out (R, n); out may be x itself.
func SoftmaxRows[T Float](x, out []T, n int) {
	if n <= 0 {
		return
	}
	parallelRows(len(x)/n, n, rowsOf[T]{x, nil, out, n, softmaxRow})
}

// LogSoftmaxRows applies LogSoftmaxRow to each n-element row of x (R, n),
// writing out (R, n); out may be x itself.
func LogSoftmaxRows[T Float](x, out []T, n int) {
	if n <= 0 {
		return
	}
	parallelRows(len(x)/n, n, rowsOf[T]{x, nil, out, n, logSoftmaxRow})
}

// SoftmaxRowGrad is the backward of SoftmaxRow: given y = softmax(x) and
// dy = ∂L/∂y, it sets dx = y ⊙ (dy − ⟨dy, y⟩). dx may be dy itself.
func SoftmaxRowGrad[T Float](y, dy, dx []T) {
	if y32, ok := any(y).([]float32); ok {
		dy32 := any(dy).([]float32)
		vec.MulDiff(any(dx).([]float32), y32, dy32, vec.Dot(y32, dy32))
		return
	}
	dot := T(dotF64(y, dy))
	dx = dx[:len(y)]
	dy = dy[:len(y)]
	for i, v := range y {
		dx[i] = v * (dy[i] - dot)
	}
}

// LogSoftmaxRowGrad is the backward of LogSoftmaxRow: given y =
// log_softmax(x) and dy = ∂L/∂y, it sets dx = dy − e^y·Σdy. dx may be dy itself.
func LogSoftmaxRowGrad[T Float](y, dy, dx []T) {
	if y32, ok := any(y).([]float32); ok {
		logSoftmaxRowGrad32(y32, any(dy).([]float32), any(dx).([]float32))
		return
	}
	s := T(sumF64(dy[:len(y)]))
	var buf [256]T
	for lo := 0; lo < len(y); lo += len(buf) {
		hi := min(lo+len(buf), len(y))
		e := buf[:hi-lo]
		expShift(y[lo:hi], e, 0)
		for i, ei := range e {
			dx[lo+i] = dy[lo+i] - ei*s
		}
	}
}

// logSoftmaxRowGrad32 is LogSoftmaxRowGrad in float32: dx = dy − e^y·Σdy,
// with e^y in L1-sized chunks and the update as one fused multiply-add.
func logSoftmaxRowGrad32(y, dy, dx []float32) {
	dy, dx = dy[:len(y)], dx[:len(y)]
	s := vec.Sum(dy)
	var buf [256]float32
	for lo := 0; lo < len(y); lo += len(buf) {
		hi := min(lo+len(buf), len(y))
		e := buf[:hi-lo]
		vec.Exp(e, y[lo:hi])
		copy(dx[lo:hi], dy[lo:hi]) // nothing to do when dx is dy
		vec.AXPY(dx[lo:hi], e, -s)
	}
}

// SoftmaxRowsGrad applies SoftmaxRowGrad to each n-element row of y, dy, dx (R, n).
func SoftmaxRowsGrad[T Float](y, dy, dx []T, n int) {
	if n <= 0 {
		return
	}
	parallelRows(len(y)/n, n, rowsOf[T]{y, dy, dx, n, softmaxRowGrad})
}

// LogSoftmaxRowsGrad applies LogSoftmaxRowGrad to each n-element row of y, dy, dx (R, n).
func LogSoftmaxRowsGrad[T Float](y, dy, dx []T, n int) {
	if n <= 0 {
		return
	}
	parallelRows(len(y)/n, n, rowsOf[T]{y, dy, dx, n, logSoftmaxRowGrad})
}

// rowFunc names one of the row functions above.
type rowFunc int

const (
	softmaxRow rowFunc = iota
	logSoftmaxRow
	softmaxRowGrad
	logSoftmaxRowGrad
)

// rowsOf applies fn to each n-element row: fn(x, out) forward, fn(x, dy,
// out) backward, x then being the forward's output.
type rowsOf[T Float] struct {
	x, dy, out []T
	n          int
	fn         rowFunc
}

func (k *rowsOf[T]) Range(lo, hi int) {
	n := k.n
	if k.fn == softmaxRow {
		softmaxEachRow(k.x[lo*n:hi*n], k.out[lo*n:hi*n], hi-lo, n, n)
		return
	}
	for r := lo; r < hi; r++ {
		x, out := k.x[r*n:(r+1)*n], k.out[r*n:(r+1)*n]
		switch k.fn {
		case logSoftmaxRow:
			LogSoftmaxRow(x, out)
		case softmaxRowGrad:
			SoftmaxRowGrad(x, k.dy[r*n:(r+1)*n], out)
		case logSoftmaxRowGrad:
			LogSoftmaxRowGrad(x, k.dy[r*n:(r+1)*n], out)
		}
	}
}

// maxOf returns the largest element of a non-empty x, or NaN if x holds one.
func maxOf[T Float](x []T) T {
	m := x[0]
	for _, v := range x[1:] {
		if v > m || v != v {
			m = v
		}
	}
	return m
}

// sumF64 returns Σx accumulated in float64.
func sumF64[T Float](x []T) float64 {
	var a0, a1, a2, a3 float64
	for ; len(x) >= 4; x = x[4:] {
		a0 += float64(x[0])
		a1 += float64(x[1])
		a2 += float64(x[2])
		a3 += float64(x[3])
	}
	for _, v := range x {
		a0 += float64(v)
	}
	return (a0 + a1) + (a2 + a3)
}

// dotF64 returns ⟨x, y⟩ over len(x) elements, accumulated in float64.
func dotF64[T Float](x, y []T) float64 {
	var a0, a1, a2, a3 float64
	for ; len(x) >= 4 && len(y) >= 4; x, y = x[4:], y[4:] {
		a0 += float64(x[0] * y[0])
		a1 += float64(x[1] * y[1])
		a2 += float64(x[2] * y[2])
		a3 += float64(x[3] * y[3])
	}
	y = y[:len(x)]
	for i, v := range x {
		a0 += float64(v * y[i])
	}
	return (a0 + a1) + (a2 + a3)
}
