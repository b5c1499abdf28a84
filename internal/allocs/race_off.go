//go:build !race

package allocs

// RaceDetector is true in a build with -race, whose sync.Pool drops items
// at random: tests that count allocations skip under it.
const RaceDetector = false
