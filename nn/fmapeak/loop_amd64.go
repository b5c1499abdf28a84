//go:build amd64 && !purego

package fmapeak

import "golang.org/x/sys/cpu"

//go:generate go run gen_loops.go

// The loops of loop_amd64.s (see gen_loops.go): iters iterations of
// independent multiply-add instructions with every operand 1, returning
// lane 0 of the sum of the accumulators.

//go:noescape
func fmaLoopAVX512(iters int) float32 // 24 VFMADD231PS on zmm: 24·iters

//go:noescape
func fmaLoopAVX2(iters int) float32 // 12 VFMADD231PS on ymm: 12·iters

//go:noescape
func dpbf16Loop(iters int) float32 // 24 VDPBF16PS on zmm: 48·iters

//go:noescape
func fmaphLoop(iters int) float32 // 24 VFMADD231PH on zmm: 24·min(iters, 2048)

//go:noescape
func tdpbf16Loop(iters int) float32 // 6 TDPBF16PS on 16×16 tiles: 192·iters

// cpuid executes CPUID with EAX = leaf and ECX = sub.
func cpuid(leaf, sub uint32) (eax, ebx, ecx, edx uint32)

// hasAVX512FP16 reports CPUID.(EAX=7, ECX=0):EDX bit 23 on a CPU whose
// operating system keeps the AVX-512 state (which cpu.X86.HasAVX512F
// includes).
func hasAVX512FP16() bool {
	if !cpu.X86.HasAVX512F {
		return false
	}
	if max, _, _, _ := cpuid(0, 0); max < 7 {
		return false
	}
	_, _, _, edx := cpuid(7, 0)
	return edx&(1<<23) != 0
}

// cpuLoops lists the loops this CPU runs, the widest of each kind first.
func cpuLoops() []*loop {
	x := cpu.X86
	var ls []*loop
	if x.HasAVX512F {
		ls = append(ls, &loop{kind: FP32, isa: "AVX-512", insns: 24, flops: 32, count: 24, run: fmaLoopAVX512})
	}
	if x.HasAVX2 && x.HasFMA {
		ls = append(ls, &loop{kind: FP32, isa: "AVX2", insns: 12, flops: 16, count: 12, run: fmaLoopAVX2})
	}
	if x.HasAVX512F && x.HasAVX512BF16 {
		ls = append(ls, &loop{kind: BF16, isa: "AVX512_BF16", insns: 24, flops: 64, count: 48, run: dpbf16Loop})
	}
	if TilesUsable() == nil {
		// 16·16 lanes of 16 pair products: 16384 FLOP an instruction.
		ls = append(ls, &loop{kind: AMX, isa: "AMX-BF16", insns: 6, flops: 16384, count: 192, run: tdpbf16Loop})
	}
	if hasAVX512FP16() {
		ls = append(ls, &loop{kind: FP16, isa: "AVX512_FP16", insns: 24, flops: 64, count: 24, saturates: 2048, run: fmaphLoop})
	}
	return ls
}
