//go:build !openblas

package blas

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/vit-train/vit-train/internal/allocs"
	"github.com/vit-train/vit-train/nn/fmapeak"
)

// TestBF16Rounding checks toBF16 against the bfloat16 grid itself: every
// bfloat16 widens exactly and converts back to itself, the midpoint of
// two neighbours rounds to the even one, and a float32 step either side
// of it to the nearer one; denormals become signed zeros, NaN stays NaN.
func TestBF16Rounding(t *testing.T) {
	for h := range 1 << 16 {
		x := fromBF16(uint16(h))
		exp, man := h>>7&0xff, h&0x7f
		switch {
		case exp == 0xff && man != 0:
			if !math.IsNaN(float64(x)) || !math.IsNaN(float64(fromBF16(toBF16(x)))) {
				t.Fatalf("NaN %#04x: widened %v, back %#04x", h, x, toBF16(x))
			}
			continue
		case exp == 0:
			// Denormal (or zero): read as a zero of its sign.
			if got, want := toBF16(x), uint16(h&0x8000); got != want {
				t.Fatalf("denormal %#04x → %#04x, want %#04x", h, got, want)
			}
			continue
		}
		want := math.Ldexp(1+float64(man)/128, exp-127)
		if h&0x8000 != 0 {
			want = -want
		}
		if exp == 0xff {
			want = math.Inf(1 - 2*(h>>15))
		}
		if float64(x) != want {
			t.Fatalf("fromBF16(%#04x) = %v, want %v", h, x, want)
		}
		if got := toBF16(x); got != uint16(h) {
			t.Fatalf("toBF16(%v) = %#04x, want %#04x", x, got, h)
		}
		if exp == 0xff || man == 0x7f && exp == 0xfe {
			continue
		}
		// The midpoint towards the next bfloat16 away from zero.
		next := fromBF16(uint16(h + 1))
		mid := float32((float64(x) + float64(next)) / 2) // exact in float32
		even := uint16(h)
		if h&1 == 1 {
			even = uint16(h + 1)
		}
		if got := toBF16(mid); got != even {
			t.Fatalf("midpoint %v of %#04x and %#04x → %#04x, want %#04x", mid, h, h+1, got, even)
		}
		below := math.Nextafter32(mid, 0)
		above := math.Nextafter32(mid, float32(math.Copysign(math.Inf(1), float64(mid))))
		if toBF16(below) != uint16(h) || toBF16(above) != uint16(h+1) {
			t.Fatalf("around the midpoint of %#04x and %#04x: %#04x, %#04x", h, h+1, toBF16(below), toBF16(above))
		}
	}
	// Past the largest bfloat16 by half a unit: infinity.
	if got := toBF16(math.MaxFloat32); got != 0x7f80 {
		t.Errorf("toBF16(MaxFloat32) = %#04x, want infinity", got)
	}
}

// TestFP16Rounding checks toFP16 and fromFP16 the same way on the float16
// grid, subnormals included.
func TestFP16Rounding(t *testing.T) {
	for h := range 1 << 16 {
		x := fromFP16(uint16(h))
		exp, man := h>>10&0x1f, h&0x3ff
		var want float64
		switch {
		case exp == 0x1f && man != 0:
			if !math.IsNaN(float64(x)) || !math.IsNaN(float64(fromFP16(toFP16(x)))) {
				t.Fatalf("NaN %#04x: widened %v", h, x)
			}
			continue
		case exp == 0x1f:
			want = math.Inf(1)
		case exp == 0:
			want = math.Ldexp(float64(man), -24)
		default:
			want = math.Ldexp(1+float64(man)/1024, exp-15)
		}
		if h&0x8000 != 0 {
			want = -want
		}
		if float64(x) != want || math.Signbit(float64(x)) != (h&0x8000 != 0) {
			t.Fatalf("fromFP16(%#04x) = %v, want %v", h, x, want)
		}
		if got := toFP16(x); got != uint16(h) {
			t.Fatalf("toFP16(%v) = %#04x, want %#04x", x, got, h)
		}
		if exp == 0x1f {
			continue
		}
		// The midpoint towards the next float16 away from zero (from the
		// largest finite one, 65520, which rounds to infinity).
		next := float64(fromFP16(uint16(h + 1)))
		if exp == 0x1e && man == 0x3ff {
			next = math.Copysign(65536, want)
		}
		mid := float32((want + next) / 2)
		even := uint16(h)
		if h&1 == 1 {
			even = uint16(h + 1)
		}
		if got := toFP16(mid); got != even {
			t.Fatalf("midpoint %v of %#04x and %#04x → %#04x, want %#04x", mid, h, h+1, got, even)
		}
		below := math.Nextafter32(mid, 0)
		above := math.Nextafter32(mid, float32(math.Copysign(math.Inf(1), float64(mid))))
		if toFP16(below) != uint16(h) || toFP16(above) != uint16(h+1) {
			t.Fatalf("around the midpoint of %#04x and %#04x: %#04x, %#04x", h, h+1, toFP16(below), toFP16(above))
		}
	}
	// Below half the smallest subnormal: zero of the sign.
	if got := toFP16(-0x1p-26); got != 0x8000 {
		t.Errorf("toFP16(-2^-26) = %#04x, want -0", got)
	}
}

// TestFMA32 checks the emulation's fused multiply-add against big.Float,
// on values whose products and sums round in every way, ties included.
func TestFMA32(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	val := func() float32 {
		// Short mantissas make exact ties frequent.
		m := float32(rng.IntN(1<<12) - 1<<11)
		return float32(math.Ldexp(float64(m), rng.IntN(60)-30))
	}
	for i := range 200000 {
		x, y, z := val(), val(), val()
		if i%2 == 0 {
			x, y, z = rng.Float32()-0.5, rng.Float32()*1e-3, rng.Float32()-0.5
		}
		exact := new(big.Float).SetPrec(200).SetFloat64(float64(x))
		exact.Mul(exact, new(big.Float).SetFloat64(float64(y)))
		exact.Add(exact, new(big.Float).SetFloat64(float64(z)))
		want, _ := exact.Float32()
		if got := fma32(x, y, z); got != want {
			t.Fatalf("fma32(%v, %v, %v) = %v, want %v", x, y, z, got, want)
		}
	}
}

// TestDotStep checks VDPBF16PS's rounding on worked cases.
func TestDotStep(t *testing.T) {
	for _, c := range []struct{ acc, x, y, want float32 }{
		{1, 0x1p-12, 0x1p-12, 1},                                         // 1 + 2^-24: a tie, to even
		{1 + 0x1p-23, 0x1p-12, 0x1p-12, 1 + 0x1p-22},                     // a tie, to even (up)
		{1, 3 * 0x1p-13, 0x1p-12, 1 + 0x1p-23},                           // 1 + 1.5·2^-24, up
		{0, 0x1p-64, 0x1p-64, 0},                                         // 2^-128: flushed
		{0, -0x1p-64, 0x1p-64, float32(math.Copysign(0, -1))},            // flushed to -0
		{0x1p-126, -0x1p-64, 0x1p-64, 0},                                 // 2^-126 - 2^-128: flushed
		{0x1p-126, 0x1p-64, 0x1p-64, 0x1p-126 + 0x1p-128},                // normal
		{0x1p-125, -1, 0x1p-126, 0x1p-126},                               // normal
		{0x1p-40, 0x1p-130, 0x1p10, 0x1p-40},                             // a denormal factor reads as 0
		{3, 2, 0.5, 4},                                                   // exact
		{float32(math.Inf(1)), 1, 1, float32(math.Inf(1))},               //
		{math.MaxFloat32, 0x1p127, 0x1p1, float32(math.Inf(1))},          // overflow
		{-math.MaxFloat32, 0x1p127, 0x1p1, float32(math.MaxFloat32) * 1}, // -max + 2^128 = max... rounds
	} {
		got := dotStep(c.acc, c.x, c.y)
		if c.acc == -math.MaxFloat32 {
			// -max + 2^128 = 2^104, exactly.
			c.want = 0x1p104
		}
		if math.Float32bits(got) != math.Float32bits(c.want) {
			t.Errorf("dotStep(%v, %v, %v) = %v, want %v", c.acc, c.x, c.y, got, c.want)
		}
	}
	// The odd product first: with acc = 1, 2^-24 then 2^-24 (each a tie,
	// to 1) is 1; an order adding the pair first would give 1 + 2^-23.
	p := bf16Pair(0x1p-12, 0x1p-12)
	if got := dpbf16(1, p, p); got != 1 {
		t.Errorf("dpbf16(1, 2^-12 pairs) = %v, want 1", got)
	}
	// ... and the high product before the low one: 1 + 2^-23 + 2^-24 is a
	// tie (to 1 + 2^-22), 2^-24 + 2^-23 then... differs by order.
	hi, lo := bf16Pair(0x1p-12, 0x1p-11), bf16Pair(0x1p-12, 0x1p-12)
	// acc 1: high 2^-11·2^-12 = 2^-23 → 1+2^-23; low 2^-24 → tie → 1+2^-22.
	if got := dpbf16(1, hi, lo); got != 1+0x1p-22 {
		t.Errorf("dpbf16 order: %v, want 1+2^-22", got)
	}
	// Swapped: low 2^-24 first → 1 (tie to even), then 2^-23 → 1+2^-23.
	if got := dpbf16(1, bf16Pair(0x1p-11, 0x1p-12), lo); got != 1+0x1p-23 {
		t.Errorf("dpbf16 order swapped: %v, want 1+2^-23", got)
	}
}

// lowCase is one product of a low-precision variant.
type lowCase struct {
	tA, tB      bool
	m, n, k     int
	alpha, beta float32
	bias        bool
	scale       float64 // operands' magnitude: 1, or tiny to reach denormal sums
}

func (c lowCase) String() string {
	return fmt.Sprintf("tA=%v tB=%v m=%d n=%d k=%d alpha=%v beta=%v bias=%v scale=%g", c.tA, c.tB, c.m, c.n, c.k, c.alpha, c.beta, c.bias, c.scale)
}

func lowCases() []lowCase {
	var cs []lowCase
	for _, s := range []struct{ m, n, k int }{
		{1, 1, 1}, {12, 32, 8}, {5, 7, 3}, {13, 33, 17}, {6, 16, 64}, {7, 17, 65}, {25, 70, 1601},
		{40, 300, 1000}, {200, 130, 300}, {3, 50, 2000}, {200, 400, 288},
		{48, 48, 100}, {49, 49, 70}, // the last 32 rows and columns: 16 and 17
	} {
		for i, tr := range [][2]bool{{false, false}, {false, true}, {true, false}, {true, true}} {
			cs = append(cs, lowCase{tr[0], tr[1], s.m, s.n, s.k, 1, 0, i%2 == 0, 1})
		}
		cs = append(cs, lowCase{false, true, s.m, s.n, s.k, -0.7, 0.3, true, 1})
		cs = append(cs, lowCase{true, false, s.m, s.n, s.k, 1.5, 1, false, 1})
		cs = append(cs, lowCase{false, true, s.m, s.n, s.k, 1, 0, false, 1e-20})
	}
	return append(cs, lowCase{false, false, 4, 5, 0, 1, 0.5, true, 1}, lowCase{false, false, 4, 5, 9, 0, 2, false, 1})
}

// lowOperands returns op(A), op(B) storage, C and a bias for c: normal
// values of random magnitude, some exact zeros and infinities-free.
func (c lowCase) operands(rng *rand.Rand) (a, b, cm, bias []float32) {
	fill := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			v := rng.NormFloat64() * math.Exp2(float64(rng.IntN(9)-4)) * c.scale
			if rng.IntN(50) == 0 {
				v = 0
			}
			x[i] = float32(v)
		}
		return x
	}
	return fill(c.m * c.k), fill(c.k * c.n), fill(c.m * c.n), fill(c.n)
}

// runningVariants returns those of vs this CPU runs, logging the others.
func runningVariants(t testing.TB, vs []Variant) []Variant {
	t.Helper()
	var runs []Variant
	for _, v := range vs {
		if !v.Runs() {
			t.Logf("the %s product does not run here", v)
			continue
		}
		runs = append(runs, v)
	}
	return runs
}

func sameBits(x, y float32) bool {
	return math.Float32bits(x) == math.Float32bits(y) || math.IsNaN(float64(x)) && math.IsNaN(float64(y))
}

// emulations are the reference products of the low-precision variants:
// emulateBF16, emulateFP16 and emulateAMX with the kernel's K blocks of kc steps.
var emulations = map[Variant]func(tA, tB bool, m, n, k, kc int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, bias []float32){
	BF16: emulateBF16,
	AMX:  emulateAMX,
	FP16: func(tA, tB bool, m, n, k, kc int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, bias []float32) {
		emulateFP16(tA, tB, m, n, k, kc, fp16Block, alpha, a, lda, b, ldb, beta, c, ldc, bias)
	},
}

// TestVariantsMatchEmulation checks each low-precision kernel this CPU
// runs against its emulation bit for bit, alone and through packed B
// panels and GemmPacked, on tiles whole and partial, K blocks one and
// several (and products shorter than GemmAs gives it), every transpose,
// and sums small enough to be flushed.
func TestVariantsMatchEmulation(t *testing.T) {
	for _, v := range Variants()[1:] {
		t.Run(string(v), func(t *testing.T) {
			kern := lowKernel(v)
			if kern == nil {
				t.Skipf("%s kernel not run: this CPU or build lacks its instructions (its emulation is tested alone)", v)
			}
			t.Logf("%s kernel runs here and is checked bit for bit against the emulation", v)
			checkVariant(t, v, kern)
		})
	}
}

func checkVariant(t *testing.T, v Variant, kern *kernel) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, c := range lowCases() {
		checkCase(t, v, kern, c, rng)
	}
}

// checkCase checks product c of variant v, whose kernel is kern, against
// the emulation bit for bit, through GemmAs and through GemmPacked.
func checkCase(t *testing.T, v Variant, kern *kernel, c lowCase, rng *rand.Rand) {
	a, b, c0, biasRow := c.operands(rng)
	lda, ldb := c.k, c.n
	if c.tA {
		lda = c.m
	}
	if c.tB {
		ldb = c.k
	}
	var bias []float32
	if c.bias {
		bias = biasRow
	}
	kc := 1 // k = 0 has no K block
	if c.k > 0 {
		kc, _ = kern.blockSizes(c.n, c.k)
	}
	want := append([]float32(nil), c0...)
	emulations[v](c.tA, c.tB, c.m, c.n, c.k, kc, c.alpha, a, max(1, lda), b, max(1, ldb), c.beta, want, c.n, bias)
	got := append([]float32(nil), c0...)
	if c.m > 0 && c.n > 0 {
		variantGemmThen(v, c.tA, c.tB, c.m, c.n, c.k, c.alpha, a, max(1, lda), b, max(1, ldb), c.beta, got, c.n, bias, nil, nil)
	}
	packed := append([]float32(nil), c0...)
	GemmPacked(c.tA, c.m, c.alpha, a, max(1, lda), packB(variantPanels(v), c.tB, c.k, c.n, b, max(1, ldb)), c.beta, packed, c.n, bias)
	bad := 0
	for i := range want {
		if (!sameBits(got[i], want[i]) || !sameBits(packed[i], want[i])) && bad < 5 {
			bad++
			t.Errorf("%v: C[%d, %d] = %v (packed B: %v), emulation %v", c, i/c.n, i%c.n, got[i], packed[i], want[i])
		}
	}
}

// TestAMXStreamsB checks the amx kernel against its emulation, as
// TestVariantsMatchEmulation does, on products whose tasks split only
// their columns (streamsB), on two workers: more columns than rows, B
// over all of K too large for the caches, the last K block, strip and
// column panel partial. The first packs each task's K blocks of B one at
// a time as its strips reach them (K too long for a wavefront); the
// second packs them all first and takes its strips in a wavefront.
func TestAMXStreamsB(t *testing.T) {
	kern := lowKernel(AMX)
	if kern == nil {
		t.Skip("amx kernel not run: this CPU or build lacks its instructions")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	rng := rand.New(rand.NewPCG(17, 18))
	for _, c := range []struct {
		c         lowCase
		wavefront bool
	}{
		{lowCase{true, false, 100, 700, 4200, 1, 0, true, 1}, false},
		{lowCase{false, true, 70, 1100, 1000, -0.5, 0.25, false, 1}, true},
	} {
		g := &gemmCall{kern: kern, tA: c.c.tA, tB: c.c.tB, m: c.c.m, n: c.c.n, k: c.c.k}
		g.plan()
		if !g.streamsB() || g.rowTasks != 1 || g.wavefront() != c.wavefront {
			t.Fatalf("%v: streams B %v, %d row tasks, wavefront %v; want B streamed by column tasks, wavefront %v", c.c, g.streamsB(), g.rowTasks, g.wavefront(), c.wavefront)
		}
		checkCase(t, AMX, kern, c.c, rng)
	}
}

// TestAMXStripOrders checks the amx kernel against its emulation, as
// TestVariantsMatchEmulation does, on one row task (one worker) in each
// of the orders in which blockStrips takes a column block's strips: a
// wavefront of 7 strips over 4 K blocks, one strip a call; for a product
// whose B over all of K is too large for one (K of 2,000 steps over 270
// columns), two chunks of rows, each in calls of several strips that
// carry their sums from K block to K block; and one K block over 10
// strips, a call of stripsPerCall strips and one of the rest, whose last
// strip is partial.
func TestAMXStripOrders(t *testing.T) {
	kern := lowKernel(AMX)
	if kern == nil {
		t.Skip("amx kernel not run: this CPU or build lacks its instructions")
	}
	// One worker: one row task, so that its rows make two chunks.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	rng := rand.New(rand.NewPCG(7, 8))
	for _, o := range []struct {
		c     lowCase
		order string
	}{
		{lowCase{false, true, 200, 130, 800, 1, 0, true, 1}, "wavefront"},
		{lowCase{false, true, 230, 270, 2000, 0.5, 0.25, true, 1}, "chunks"},
		{lowCase{false, true, 300, 70, 100, 0.5, 0.25, true, 1}, "one block"},
	} {
		c := o.c
		g := &gemmCall{kern: kern, m: c.m, n: c.n, k: c.k}
		g.plan()
		wave, blocks, chunk := g.wavefront(), ceilDiv(c.k, g.kc), g.stripChunk()
		var ok bool
		switch o.order {
		case "wavefront":
			ok = wave && blocks >= 3
		case "chunks":
			ok = !wave && blocks >= 2 && chunk >= 2*kern.mr && chunk < g.rowBlock
		case "one block":
			ok = blocks == 1 && g.rowBlock > stripsPerCall*kern.mr && c.m%kern.mr != 0
		}
		if !ok {
			t.Fatalf("%v (%s): wavefront %v over %d K blocks, chunks of %d rows of %d", c, o.order, wave, blocks, chunk, g.rowBlock)
		}
		checkCase(t, AMX, kern, c, rng)
	}
}

// TestEmulationBF16Error checks the bf16 emulation's error (see
// checkEmulationError).
func TestEmulationBF16Error(t *testing.T) { checkEmulationError(t, BF16) }

// checkEmulationError checks v's emulation against the float64 product of
// unrounded operands: within the bound of two bfloat16 roundings per
// product and float32 sums, and not as close as float32 operands would
// be (the operands are rounded).
func checkEmulationError(t *testing.T, v Variant) {
	rng := rand.New(rand.NewPCG(7, 8))
	const m, n, k = 20, 30, 1000
	c := lowCase{m: m, n: n, k: k, alpha: 1, scale: 1}
	a, b, _, _ := c.operands(rng)
	got := make([]float32, m*n)
	emulations[v](false, false, m, n, k, 384, 1, a, k, b, n, 0, got, n, nil)
	worst := 0.0
	for i := range m {
		for j := range n {
			var exact, abs float64
			for p := range k {
				x := float64(a[i*k+p]) * float64(b[p*n+j])
				exact += x
				abs += math.Abs(x)
			}
			bound := (2*0x1p-8 + 0x1p-16 + float64(k+1)*0x1p-24) * abs
			e := math.Abs(float64(got[i*n+j]) - exact)
			if e > bound {
				t.Fatalf("%s: C[%d, %d] = %v, exact %v: error %g over the bound %g", v, i, j, got[i*n+j], exact, e, bound)
			}
			worst = max(worst, e/abs)
		}
	}
	if worst < 0x1p-12 {
		t.Errorf("%s: largest error %g of Σ|a·b|: the operands were not rounded to bfloat16", v, worst)
	}
	t.Logf("%s emulation, k = %d: largest error %.3g of Σ|a·b|", v, k, worst)
}

// TestVariants logs which products run on this CPU, and that Mixed
// chooses one that runs.
func TestVariants(t *testing.T) {
	for _, v := range Variants() {
		t.Logf("variant %s runs here: %v", v, v.Runs())
	}
	// Each low-precision kernel runs only where its instructions are.
	if BF16.Runs() && !fmapeak.Has(fmapeak.BF16) || FP16.Runs() && !fmapeak.Has(fmapeak.FP16) {
		t.Errorf("a variant runs without its instructions: bf16 %v (AVX512_BF16 %v), fp16 %v (AVX512_FP16 %v)",
			BF16.Runs(), fmapeak.Has(fmapeak.BF16), FP16.Runs(), fmapeak.Has(fmapeak.FP16))
	}
	if v := Mixed(); !v.Runs() {
		t.Errorf("Mixed() = %s, which does not run here", v)
	} else {
		t.Logf("mixed precision runs %s", v)
	}
}

func TestChooseMixed(t *testing.T) {
	fastest := func() Variant { return BF16 }
	if got := chooseMixed("", fastest); got != BF16 {
		t.Errorf(`chooseMixed("") = %s, want the fastest`, got)
	}
	if got := chooseMixed("none", fastest); got != FP32 {
		t.Errorf(`chooseMixed("none") = %s`, got)
	}
	for _, env := range []string{"fp8", "fp32"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("VIT_TRAIN_LOWP=%s accepted", env)
				}
			}()
			chooseMixed(env, fastest)
		}()
	}
	if !BF16.Runs() {
		defer func() {
			if recover() == nil {
				t.Error("VIT_TRAIN_LOWP=bf16 accepted on a CPU that does not run it")
			}
		}()
	}
	chooseMixed("bf16", fastest)
}

// BenchmarkGemmVariants reports GFLOP/s of each model product (see
// benchShapes) in each low-precision variant this CPU runs, packing and
// converting included, and their share of the variant's peak (see
// reportRates). A product whose B is a layer's weight runs a second time
// as ".../packed", with B packed once before the timer (PackBAs and
// GemmPacked), as training with AdamW and inference run it.
func BenchmarkGemmVariants(b *testing.B) {
	for _, v := range Variants()[1:] {
		if !v.Runs() {
			continue
		}
		for _, s := range benchShapes {
			b.Run(fmt.Sprintf("%s/%s", v, s.name), func(b *testing.B) { benchVariant(b, v, s, false) })
			if s.weight {
				b.Run(fmt.Sprintf("%s/%s/packed", v, s.name), func(b *testing.B) { benchVariant(b, v, s, true) })
			}
		}
	}
}

// benchVariant times s in v's arithmetic, with B packed before the timer
// when packed is set.
func benchVariant(b *testing.B, v Variant, s gemmShape, packed bool) {
	a, w, c, lda, ldb, ldc := s.operands()
	var pb *PackedB[float32]
	if packed {
		pb = PackBAs(v, s.tB, s.k, s.n, w, ldb)
	}
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		if pb != nil {
			GemmPacked(s.tA, s.m, 1, a, lda, pb, 0, c, ldc, nil)
		} else {
			GemmAs(v, s.tA, s.tB, s.m, s.n, s.k, 1, a, lda, w, ldb, 0, c, ldc, nil)
		}
	}
	reportRates(b, s, cpu0, fmapeak.Kind(v))
}

// TestFP16BlockError measures, with the emulation, the error of float16
// products summed in float16 runs of each length against the float64
// product, next to the bfloat16 variant's, on operands shaped like a
// linear layer's (activations of unit scale, weights of 1/√k) over a
// ViT's K (768 and 3072). fp16Block is the longest run whose error stays
// under half the bfloat16 variant's.
func TestFP16BlockError(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const m, n = 8, 32
	longer := false // runs of 2·fp16Block would also do for every k
	for i, k := range []int{768, 3072} {
		a, b := make([]float32, m*k), make([]float32, k*n)
		for i := range a {
			a[i] = float32(rng.NormFloat64())
		}
		for i := range b {
			b[i] = float32(rng.NormFloat64() / math.Sqrt(float64(k)))
		}
		// The error relative to Σ|a·b|, as a root mean square over C.
		rms := func(c []float32) float64 {
			var s float64
			for i := range m {
				for j := range n {
					var exact, abs float64
					for p := range k {
						x := float64(a[i*k+p]) * float64(b[p*n+j])
						exact, abs = exact+x, abs+math.Abs(x)
					}
					e := (float64(c[i*n+j]) - exact) / abs
					s += e * e
				}
			}
			return math.Sqrt(s / (m * n))
		}
		kc, _ := blockSizes(n, k, 32)
		c := make([]float32, m*n)
		emulateBF16(false, false, m, n, k, kc, 1, a, k, b, n, 0, c, n, nil)
		bf := rms(c)
		t.Logf("k = %d: bf16 error %.3g", k, bf)
		for _, block := range []int{1, 4, 8, 16, 32, 64, 128, 256} {
			emulateFP16(false, false, m, n, k, kc, block, 1, a, k, b, n, 0, c, n, nil)
			e := rms(c)
			t.Logf("k = %d: fp16, runs of %3d: error %.3g (%.2f of bf16's)", k, block, e, e/bf)
			if block == fp16Block && e > bf/2 {
				t.Errorf("k = %d: fp16 runs of %d steps err %.3g, over half bf16's %.3g", k, block, e, bf)
			}
			if block == 2*fp16Block {
				longer = (i == 0 || longer) && e <= bf/2
			}
		}
	}
	if longer {
		t.Errorf("runs of %d steps stay under half bf16's error too: fp16Block could be longer", 2*fp16Block)
	}
}

// TestFMA16 checks the emulation's float16 multiply-add against the
// exact value (big.Float) rounded to the float16 grid: 11 significant
// bits to nearest even, and below 2^-14 whole units of 2^-24 (the same
// spacing as just above it), to nearest even.
func TestFMA16(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	finite := func(h uint16) bool { return h&0x7c00 != 0x7c00 }
	for range 100000 {
		x, y, acc := uint16(rng.Uint32()), uint16(rng.Uint32()), uint16(rng.Uint32())
		if !finite(x) || !finite(y) || !finite(acc) {
			continue
		}
		exact := new(big.Float).SetPrec(200).SetFloat64(float64(fromFP16(x)))
		exact.Mul(exact, new(big.Float).SetFloat64(float64(fromFP16(y))))
		exact.Add(exact, new(big.Float).SetFloat64(float64(fromFP16(acc))))
		var rounded float64
		if e, _ := exact.Float64(); math.Abs(e) < 0x1p-14 {
			units := new(big.Float).SetMantExp(exact, 24)
			whole, _ := units.Int(nil) // toward zero
			frac, _ := new(big.Float).Sub(units, new(big.Float).SetInt(whole)).Float64()
			n := whole.Int64()
			if math.Abs(frac) > 0.5 || math.Abs(frac) == 0.5 && n%2 != 0 {
				n += int64(math.Copysign(1, frac))
			}
			rounded = math.Copysign(math.Ldexp(float64(n), -24), e)
		} else {
			rounded, _ = new(big.Float).SetPrec(11).SetMode(big.ToNearestEven).Set(exact).Float64()
		}
		want := toFP16(float32(rounded)) // exact, or infinity past 65504
		if got := fma16(acc, x, y); got != want && !(got&0x7fff == 0 && want&0x7fff == 0) {
			t.Fatalf("fma16(%v, %v, %v) = %v (%#04x), want %v (%#04x)", fromFP16(acc), fromFP16(x), fromFP16(y), fromFP16(got), got, fromFP16(want), want)
		}
	}
}

// TestVariantsAllocs checks that a low-precision product, once warm,
// allocates nothing, as float32 ones do not.
func TestVariantsAllocs(t *testing.T) {
	for _, v := range runningVariants(t, Variants()[1:]) {
		for _, sh := range [][3]int{{65, 65, 64}, {300, 300, 300}} {
			m, n, k := sh[0], sh[1], sh[2]
			a, b, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
			for tr := range 4 {
				f := func() {
					GemmAs(v, tr&1 != 0, tr&2 != 0, m, n, k, 1, a, lda(tr&1 != 0, m, k), b, lda(tr&2 != 0, k, n), 0, c, n, nil)
				}
				if got := allocs.Least(0, 20, f); got >= 0.5 {
					t.Errorf("%s %v tr=%d: %v allocations per call", v, sh, tr, got)
				}
			}
		}
	}
}

// TestShortProductsRunInFloat32 checks GemmAs's and PackBAs's choice of
// arithmetic in each low-precision variant this CPU runs: Gemm's float32
// products bit for bit below lowPrecisionMinK steps, the variant's kernel
// bit for bit from there on.
func TestShortProductsRunInFloat32(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, v := range Variants()[1:] {
		if !v.Runs() {
			t.Logf("%s: not run here", v)
			continue
		}
		for _, k := range []int{1, 16, 50, lowPrecisionMinK - 1, lowPrecisionMinK, 200} {
			c := lowCase{false, true, 9, 40, k, 1, 0, true, 1}
			a, b, c0, bias := c.operands(rng)
			want := append([]float32(nil), c0...)
			if k < lowPrecisionMinK {
				GemmBias(false, true, c.m, c.n, k, 1, a, k, b, k, 0, want, c.n, bias)
			} else {
				variantGemmThen(v, false, true, c.m, c.n, k, 1, a, k, b, k, 0, want, c.n, bias, nil, nil)
			}
			got := append([]float32(nil), c0...)
			GemmAs(v, false, true, c.m, c.n, k, 1, a, k, b, k, 0, got, c.n, bias)
			packed := append([]float32(nil), c0...)
			GemmPacked(false, c.m, 1, a, k, PackBAs(v, true, k, c.n, b, k), 0, packed, c.n, bias)
			for i := range want {
				if !sameBits(got[i], want[i]) || !sameBits(packed[i], want[i]) {
					t.Fatalf("%s, k = %d: C[%d] = %v (packed B: %v), want %v", v, k, i, got[i], packed[i], want[i])
				}
			}
			if k >= lowPrecisionMinK {
				full := append([]float32(nil), c0...)
				GemmBias(false, true, c.m, c.n, k, 1, a, k, b, k, 0, full, c.n, bias)
				if slices.Equal(full, want) {
					t.Errorf("%s, k = %d: the variant's product equals float32's bit for bit", v, k)
				}
			}
		}
	}
}

// TestEmulationAMX checks emulateAMX on worked cases where the
// arithmetic shows: the even and odd chains summed apart, instructions of
// 32 steps starting again from zero, denormals flushed; and against the
// float64 product within the bound of the bf16 emulation's
// (checkEmulationError).
func TestEmulationAMX(t *testing.T) {
	// Products 1, 2^-24, 0, 2^-24 (steps 0-3): the odd chain is 2^-23
	// and 1 + 2^-23 is exact; added to C one by one (each 2^-24 a tie,
	// to even) they would leave 1.
	gemm := func(a, b []float32, k int) float32 {
		c := []float32{0}
		emulateAMX(false, false, 1, 1, k, k, 1, a, k, b, 1, 0, c, 1, nil)
		return c[0]
	}
	b4 := []float32{1, 0x1p-12, 0, 0x1p-12}
	if got := gemm([]float32{1, 0x1p-12, 0, 0x1p-12}, b4, 4); got != 1+0x1p-23 {
		t.Errorf("chains: %v, want 1 + 2^-23", got)
	}
	// The same products 32 steps apart: each instruction's sum goes into
	// C alone, so the two 2^-24 are ties to even, one at a time: 1.
	a, b := make([]float32, 66), make([]float32, 66)
	a[0], b[0] = 1, 1
	a[33], b[33] = 0x1p-12, 0x1p-12
	a[65], b[65] = 0x1p-12, 0x1p-12
	if got := gemm(a, b, 66); got != 1 {
		t.Errorf("instructions of 32 steps: %v, want 1", got)
	}
	// A product of 2^-128 (denormal) is flushed to zero; 2^-126 stays.
	if got := gemm([]float32{0x1p-64}, []float32{0x1p-64}, 1); got != 0 {
		t.Errorf("denormal product: %v, want 0", got)
	}
	if got := gemm([]float32{0x1p-63}, []float32{0x1p-63}, 1); got != 0x1p-126 {
		t.Errorf("smallest normal product: %v, want 2^-126", got)
	}
	// A denormal operand reads as zero even where the product would not
	// be tiny.
	if got := gemm([]float32{0x1p-130}, []float32{0x1p100}, 1); got != 0 {
		t.Errorf("denormal operand: %v, want 0", got)
	}

	checkEmulationError(t, AMX)
}
