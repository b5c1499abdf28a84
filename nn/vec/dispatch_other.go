//go:build !amd64 || purego

package vec

// level is the kernel set in use: the pure-Go one on this build.
var level = levelGeneric

func exp(dst, x []float32)                           { expGeneric(dst, x) }
func expSubSum(dst, x []float32, m float32) float32  { return expSubSumGeneric(dst, x, m) }
func maxOf(x []float32) float32                      { return maxGeneric(x) }
func sum(x []float32) float32                        { return sumGeneric(x) }
func dot(x, y []float32) float32                     { return dotGeneric(x, y) }
func sumSqDev(x []float32, m float32) float32        { return sumSqDevGeneric(x, m) }
func scale(dst, x []float32, a float32)              { scaleGeneric(dst, x, a) }
func softmaxRows(dst, x []float32, rows, n, ld int)  { softmaxRowsOf(dst, x, rows, n, ld) }
func addConst(dst, x []float32, c float32)           { addConstGeneric(dst, x, c) }
func axpy(dst, x []float32, a float32)               { axpyGeneric(dst, x, a) }
func add(dst, x, y []float32)                        { addGeneric(dst, x, y) }
func mul(dst, x, y []float32)                        { mulGeneric(dst, x, y) }
func mulDiff(dst, y, x []float32, c float32)         { mulDiffGeneric(dst, y, x, c) }
func relu(dst, x []float32)                          { reluGeneric(dst, x) }
func reluGrad(dst, y, dy []float32)                  { reluGradGeneric(dst, y, dy) }
func erf(dst, x []float32)                           { erfGeneric(dst, x) }
func gelu(dst, deriv, x []float32, _ bool)           { geluGeneric(dst, deriv, x) }
func fence()                                         {}
func copyStream(dst, src []float32) int              { return 0 }
func lnRow(y, x, w, b []float32, mean, rstd float32) { lnRowGeneric(y, x, w, b, mean, rstd) }
func lnGradWeight(acc []float64, x, dy []float32, mean, rstd float32) {
	lnGradWeightGeneric(acc, x, dy, mean, rstd)
}
func lnGradSums(x, dy, w []float32, mean, rstd float32) (sg, sgx float32) {
	return lnGradSumsGeneric(x, dy, w, mean, rstd)
}
func lnGradRow(dx, x, dy, w []float32, mean, rstd, a, c float32) {
	lnGradRowGeneric(dx, x, dy, w, mean, rstd, a, c)
}
func adamw(p, g, m, v []float32, c *AdamWCoef)  { adamwGeneric(p, g, m, v, c) }
func sumSquares64(x []float32) float64          { return sumSquares64Generic(x) }
func sumSquares64x4(x *[4][]float32) [4]float64 { return sumSquares64x4Generic(x) }

// availableLevels lists the kernel sets this build can run.
func availableLevels() []int { return []int{levelGeneric} }

// bestLevel is the kernel set this build runs.
func bestLevel() int { return levelGeneric }
