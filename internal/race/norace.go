//go:build !race

// Package race reports whether the race detector is built in: it makes
// sync.Pool drop items at random, so tests that count allocations skip
// under it.
package race

// Enabled is true in a build with -race.
const Enabled = false
