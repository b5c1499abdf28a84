package ops

// RecomputedProbsBytes is recomputedProbsBytes, for the tests of package
// ops_test.
const RecomputedProbsBytes = recomputedProbsBytes
