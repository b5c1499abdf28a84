//go:build amd64 && !purego

package augment

import "golang.org/x/sys/cpu"

func init() {
	if cpu.X86.HasAVX2 {
		levelsOf = levelsOfAVX2
		normFloats = normFloatsWithAVX2
		blendLevels = blendLevelsWithAVX2
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		// Their division by 255 takes two fused steps (levels_amd64.s).
		normLevels = normLevelsWithAVX2
		rows8Levels = rows8WithAVX2
	}
}

// levelsAVX2 is levelsOfGeneric on n (a positive multiple of 16) values
// (levels_amd64.s).
//
//go:noescape
func levelsAVX2(dst *uint8, src *float32, n int)

func levelsOfAVX2(dst []uint8, src []float32) {
	n := len(src) &^ 15
	if n > 0 {
		_ = dst[n-1]
		levelsAVX2(&dst[0], &src[0], n)
	}
	levelsOfGeneric(dst[n:], src[n:])
}

// normLevelsAVX2 is normLevelsGeneric on n (a positive multiple of 8)
// levels (levels_amd64.s).
//
//go:noescape
func normLevelsAVX2(dst *float32, src *uint8, n int, mean, inv float32)

func normLevelsWithAVX2(dst []float32, src []uint8, mean, inv float32) {
	n := len(src) &^ 7
	if n > 0 {
		_ = dst[n-1]
		normLevelsAVX2(&dst[0], &src[0], n, mean, inv)
	}
	normLevelsGeneric(dst[n:], src[n:], mean, inv)
}

// rows8AVX2 is rows8LevelsGeneric on n (a positive multiple of 8) columns
// (levels_amd64.s).
//
//go:noescape
func rows8AVX2(inter *float32, pix *uint8, n, stride int)

func rows8WithAVX2(inter []float32, pix []byte, n, stride int) {
	m := n &^ 7
	if m > 0 {
		_ = pix[7*stride+m-1]
		_ = inter[8*m-1]
		rows8AVX2(&inter[0], &pix[0], m, stride)
	}
	if m < n {
		rows8LevelsGeneric(inter[8*m:], pix[m:], n-m, stride)
	}
}

// normFloatsAVX2 is normFloatsGeneric on n (a positive multiple of 8)
// values (levels_amd64.s).
//
//go:noescape
func normFloatsAVX2(dst, src *float32, n int, mean, inv float32)

func normFloatsWithAVX2(dst, src []float32, mean, inv float32) {
	n := len(src) &^ 7
	if n > 0 {
		_ = dst[n-1]
		normFloatsAVX2(&dst[0], &src[0], n, mean, inv)
	}
	normFloatsGeneric(dst[n:], src[n:], mean, inv)
}

// blendLevelsAVX2 is blendLevelsGeneric on n (a positive multiple of 8)
// levels (levels_amd64.s).
//
//go:noescape
func blendLevelsAVX2(dst, deg, src *uint8, n int, alpha float32)

func blendLevelsWithAVX2(dst, deg, src []uint8, alpha float32) {
	n := len(src) &^ 7
	if n > 0 {
		_, _ = dst[n-1], deg[n-1]
		blendLevelsAVX2(&dst[0], &deg[0], &src[0], n, alpha)
	}
	blendLevelsGeneric(dst[n:], deg[n:], src[n:], alpha)
}
