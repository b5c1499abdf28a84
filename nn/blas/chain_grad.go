package blas

// ChainGrad holds the operands of the gradients of a chain that
// GemmChainAs computed, S = Alpha·A·Bᵀ, P = rows(S), C = P·D, and where
// GemmChainGradAs puts them:
//
//	A (M, K), B (N, K), D (N, E), dC (M, E): as the forward chain read them
//	P (M, N): the rows that multiplied D
//	DS (M, N): storage for dP, then dS
//	DA (M, K), DB (N, K), DD (N, E): the gradients of A, B and D
//
// each row-major with the row stride beside it.
type ChainGrad[T float32 | float64] struct {
	M, N, K, E int
	Alpha      T
	A          []T
	LDA        int
	B          []T
	LDB        int
	P          []T
	LDP        int
	D          []T
	LDD        int
	DC         []T
	LDDC       int
	DS         []T
	LDS        int
	DA         []T
	LDDA       int
	DB         []T
	LDDB       int
	DD         []T
	LDDD       int
}

// ChainRowsGrad is GemmChainGradAs's gradient of the chain's function of
// rows: given rows [r0, r1) of dP at ds (row r0 first, the rows LDS
// apart), it overwrites them with the same rows of dS.
type ChainRowsGrad[T float32 | float64] = func(r0, r1 int, ds []T)

// GemmChainGradAs computes the gradients of g's chain from dC, in v's
// arithmetic as GemmAs has it for each product:
//
//	dP = dC·Dᵀ, made into dS by grad, in DS
//	DA = Alpha·dS·B
//	DB = Alpha·dSᵀ·A
//	DD = Pᵀ·dC
//
// The values are GemmAs's bit for bit:
//
//	GemmAs(v, false, true, M, N, E, 1, DC, LDDC, D, LDD, 0, DS, LDS, nil)
//	grad(0, M, DS)
//	GemmAs(v, false, false, M, K, N, Alpha, DS, LDS, B, LDB, 0, DA, LDDA, nil)
//	GemmAs(v, true, false, N, K, M, Alpha, DS, LDS, A, LDA, 0, DB, LDDB, nil)
//	GemmAs(v, true, false, N, E, M, 1, P, LDP, DC, LDDC, 0, DD, LDDD, nil)
//
// Where every product runs on a kernel that computes strips (the AMX
// kernel), they go strip by strip instead, each operand converted once:
// dP's strips are made into dS while they are in L1, and DA's strips
// follow from them. That path runs on the calling goroutine; calls may
// run at once.
func GemmChainGradAs[T float32 | float64](v Variant, g *ChainGrad[T], grad ChainRowsGrad[T]) {
	checkGemm(false, true, g.M, g.N, g.E, len(g.DC), g.LDDC, len(g.D), g.LDD, len(g.DS), g.LDS)
	checkGemm(false, false, g.M, g.K, g.N, len(g.DS), g.LDS, len(g.B), g.LDB, len(g.DA), g.LDDA)
	checkGemm(true, false, g.N, g.K, g.M, len(g.DS), g.LDS, len(g.A), g.LDA, len(g.DB), g.LDDB)
	checkGemm(true, false, g.N, g.E, g.M, len(g.P), g.LDP, len(g.DC), g.LDDC, len(g.DD), g.LDDD)
	if g32, ok := any(g).(*ChainGrad[float32]); ok && !v.arithmetic(min(g.M, g.N, g.E)).IsFP32() && v.Runs() && g.K > 0 && g.E > 0 {
		if chainGradInStrips(v, g32, any(grad).(ChainRowsGrad[float32])) {
			return
		}
	}
	GemmAs(v, false, true, g.M, g.N, g.E, 1, g.DC, g.LDDC, g.D, g.LDD, 0, g.DS, g.LDS, nil)
	grad(0, g.M, g.DS)
	GemmAs(v, false, false, g.M, g.K, g.N, g.Alpha, g.DS, g.LDS, g.B, g.LDB, 0, g.DA, g.LDDA, nil)
	GemmAs(v, true, false, g.N, g.K, g.M, g.Alpha, g.DS, g.LDS, g.A, g.LDA, 0, g.DB, g.LDDB, nil)
	GemmAs(v, true, false, g.N, g.E, g.M, 1, g.P, g.LDP, g.DC, g.LDDC, 0, g.DD, g.LDDD, nil)
}
