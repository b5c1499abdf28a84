package vec

// Kernel sets, in increasing order of preference.
const (
	levelGeneric = iota
	levelAVX2
	levelAVX512
)

var levelNames = [...]string{levelGeneric: "generic", levelAVX2: "avx2", levelAVX512: "avx512"}

// Implementation names the kernels in use: "avx512", "avx2" or "generic".
func Implementation() string { return levelNames[level] }
