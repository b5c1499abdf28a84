//go:build amd64 && !purego

package fmapeak

import "golang.org/x/sys/cpu"

// fmaLoopAVX512 runs iters iterations of 24 independent VFMADD231PS on
// zmm registers (16 lanes), each accumulator starting at 0 and adding
// 1·1 per iteration, and returns one lane of the sum of the accumulators
// (24·iters while that is exact in float32).
//
//go:noescape
func fmaLoopAVX512(iters int) float32

// fmaLoopAVX2 is fmaLoopAVX512 on ymm registers (8 lanes) with 12
// accumulators, returning 12·iters.
//
//go:noescape
func fmaLoopAVX2(iters int) float32

// cpuLoops lists the loops this CPU runs, widest first.
func cpuLoops() []*loop {
	x := cpu.X86
	var ls []*loop
	if x.HasAVX512F {
		ls = append(ls, &loop{isa: "AVX-512", fmas: 24, lanes: 16, run: fmaLoopAVX512})
	}
	if x.HasAVX2 && x.HasFMA {
		ls = append(ls, &loop{isa: "AVX2", fmas: 12, lanes: 8, run: fmaLoopAVX2})
	}
	return ls
}
