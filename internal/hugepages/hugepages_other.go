//go:build !linux

package hugepages

// Advise does nothing: huge pages are asked for on Linux only.
func Advise[T any](s []T) {}
