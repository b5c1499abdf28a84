//go:build !amd64 || purego

package fmapeak

func cpuLoops() []*loop { return nil }
