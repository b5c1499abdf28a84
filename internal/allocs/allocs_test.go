package allocs

import "testing"

var sink []byte

// TestLeast: a call that allocates is counted in every measurement; one
// that does not, as zero.
func TestLeast(t *testing.T) {
	if RaceDetector {
		t.Skip("the race detector allocates")
	}
	if n := Least(0, 20, func() { sink = make([]byte, 64) }); n < 1 {
		t.Errorf("a call that allocates once counts %v", n)
	}
	buf := make([]byte, 64)
	if n := Least(0, 20, func() { buf[0]++ }); n != 0 {
		t.Errorf("a call that allocates nothing counts %v", n)
	}
}
