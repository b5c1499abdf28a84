package ops

// madeFrom records which tensor a value that one op leaves for a later
// op was made from, by the address of its first element, so that the
// later op takes the value only for the tensor it reads: an output
// converted for the linear layer reading it (convertedOutput), a bias
// gradient's sums beside the weight's (biasSums), LayerNorm's weight
// gradient's partial sums (weightPartials).
type madeFrom struct{ first any }

// firstOf is the address of x's first element, nil for an empty x.
func firstOf[T Float](x []T) any {
	if len(x) == 0 {
		return nil
	}
	return &x[0]
}

// set records that the value was made from the tensor whose first element
// is at first (firstOf).
func (m *madeFrom) set(first any) { m.first = first }

// clear records that the value was made from no tensor.
func (m *madeFrom) clear() { m.first = nil }

// take reports whether the value was made from the tensor whose first
// element is at first; if it was, it is that tensor's no longer.
func (m *madeFrom) take(first any) bool {
	if m.first == nil || m.first != first {
		return false
	}
	m.first = nil
	return true
}
