package augment

import "math"

// roundHalfEven rounds like Python 3's round(): halves go to the even
// neighbour.
func roundHalfEven(x float64) int {
	return int(math.RoundToEven(x))
}
