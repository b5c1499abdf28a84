package comm

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// The suite below runs on every rank of a job, with rank-dependent inputs,
// and checks results that each rank can compute alone. The group tests run
// it on goroutines, the MPI tests on processes. Checks report with t.Errorf
// and go on, so that every rank issues the same collectives even after a
// failure.

// suiteCheck runs every check of the suite on c.
func suiteCheck(t *testing.T, c Communicator) {
	t.Helper()
	checkAllreduce(t, c)
	checkBroadcast(t, c)
	checkBarrier(t, c)
	checkReducer(t, c)
	checkReducerAsync(t, c)
	checkReplicas(t, c)
	checkBroadcastTensors(t, c)
}

// checkBroadcastTensors gives every rank the last rank's tensors and checks
// the replicas then agree.
func checkBroadcastTensors(t *testing.T, c Communicator) {
	t.Helper()
	p := rankGrads(c.Rank())
	if err := BroadcastTensors(c, p, c.Size()-1); err != nil {
		errorf(t, c, "BroadcastTensors: %v", err)
	}
	compareGrads(t, c, "BroadcastTensors", p, rankGrads(c.Size()-1))
	if err := CheckReplicas(c, p); err != nil {
		errorf(t, c, "CheckReplicas after BroadcastTensors: %v", err)
	}
}

// errorf reports a failure of rank r.
func errorf(t *testing.T, c Communicator, format string, args ...any) {
	t.Helper()
	t.Errorf("rank %d of %d: %s", c.Rank(), c.Size(), fmt.Sprintf(format, args...))
}

// checkAllreduce checks the sums and maxima of every element type.
func checkAllreduce(t *testing.T, c Communicator) {
	t.Helper()
	r, n := c.Rank(), c.Size()
	const m = 1001
	tri := n * (n + 1) / 2 // sum of rank+1 over the ranks

	f32 := make([]float32, m)
	for i := range f32 {
		f32[i] = float32((r + 1) * (i + 1))
	}
	if err := c.AllreduceSumFloat32(f32); err != nil {
		errorf(t, c, "AllreduceSumFloat32: %v", err)
	}
	for i, v := range f32 {
		if want := float32(tri * (i + 1)); v != want {
			errorf(t, c, "AllreduceSumFloat32: [%d] = %v, want %v", i, v, want)
			break
		}
	}

	f64 := make([]float64, m)
	for i := range f64 {
		f64[i] = float64(r) + 0.25 + float64(i)*1e-3
	}
	if err := c.AllreduceSumFloat64(f64); err != nil {
		errorf(t, c, "AllreduceSumFloat64: %v", err)
	}
	for i, v := range f64 {
		want := 0.0
		for q := range n {
			want += float64(q) + 0.25 + float64(i)*1e-3
		}
		if math.Abs(v-want) > 1e-9 {
			errorf(t, c, "AllreduceSumFloat64: [%d] = %v, want %v", i, v, want)
			break
		}
	}

	i64 := make([]int64, m)
	for i := range i64 {
		i64[i] = int64(r+1)<<40 + int64(i) // beyond 32 bits, exact in int64 only
	}
	if err := c.AllreduceSumInt64(i64); err != nil {
		errorf(t, c, "AllreduceSumInt64: %v", err)
	}
	for i, v := range i64 {
		if want := int64(tri)<<40 + int64(n*i); v != want {
			errorf(t, c, "AllreduceSumInt64: [%d] = %d, want %d", i, v, want)
			break
		}
	}

	// Maxima of negative values: (r-i) mod n is largest, n-1, on rank
	// (i-1) mod n, so each rank holds the maximum of some elements.
	mf := make([]float64, m)
	mi := make([]int64, m)
	for i := range mf {
		mf[i] = -1e6 + float64((r-i%n+n)%n) - float64(i)/8
		mi[i] = -(1 << 50) + int64((r-i%n+n)%n)*(1<<33) - int64(i)
	}
	if err := c.AllreduceMaxFloat64(mf); err != nil {
		errorf(t, c, "AllreduceMaxFloat64: %v", err)
	}
	if err := c.AllreduceMaxInt64(mi); err != nil {
		errorf(t, c, "AllreduceMaxInt64: %v", err)
	}
	for i := range mf {
		if want := -1e6 + float64(n-1) - float64(i)/8; mf[i] != want {
			errorf(t, c, "AllreduceMaxFloat64: [%d] = %v, want %v", i, mf[i], want)
			break
		}
	}
	for i := range mi {
		if want := -(1 << 50) + int64(n-1)*(1<<33) - int64(i); mi[i] != want {
			errorf(t, c, "AllreduceMaxInt64: [%d] = %d, want %d", i, mi[i], want)
			break
		}
	}

	// Empty buffers are valid collectives.
	if err := c.AllreduceSumFloat32(nil); err != nil {
		errorf(t, c, "AllreduceSumFloat32(nil): %v", err)
	}
}

// checkBroadcast broadcasts every element type from the last rank and from
// rank 0.
func checkBroadcast(t *testing.T, c Communicator) {
	t.Helper()
	r, n := c.Rank(), c.Size()
	for _, root := range []int{n - 1, 0} {
		const m = 777
		f32, f64, i64, b := make([]float32, m), make([]float64, m), make([]int64, m), make([]byte, m)
		for i := range m {
			f32[i] = float32(r*1000 + i)
			f64[i] = float64(r) + float64(i)/1024
			i64[i] = int64(r)<<36 | int64(i)
			b[i] = byte(r*31 + i)
		}
		for _, err := range []error{
			c.BroadcastFloat32(f32, root), c.BroadcastFloat64(f64, root),
			c.BroadcastInt64(i64, root), c.BroadcastBytes(b, root),
		} {
			if err != nil {
				errorf(t, c, "broadcast from %d: %v", root, err)
			}
		}
		for i := range m {
			if f32[i] != float32(root*1000+i) || f64[i] != float64(root)+float64(i)/1024 ||
				i64[i] != int64(root)<<36|int64(i) || b[i] != byte(root*31+i) {
				errorf(t, c, "broadcast from %d: element %d = (%v, %v, %v, %v)", root, i, f32[i], f64[i], i64[i], b[i])
				break
			}
		}
	}
	// A root outside the job is refused on every rank before any transfer.
	if err := c.BroadcastFloat32(make([]float32, 1), n); err == nil {
		errorf(t, c, "BroadcastFloat32 from root %d of %d: no error", n, n)
	}
}

// checkBarrier makes rank 0 arrive late and checks that nobody leaves the
// barrier before it arrives.
func checkBarrier(t *testing.T, c Communicator) {
	t.Helper()
	if err := c.Barrier(); err != nil { // line up
		errorf(t, c, "Barrier: %v", err)
	}
	const delay = 150 * time.Millisecond
	start := time.Now()
	if c.Rank() == 0 {
		time.Sleep(delay)
	}
	if err := c.Barrier(); err != nil {
		errorf(t, c, "Barrier: %v", err)
	}
	if d := time.Since(start); c.Size() > 1 && d < delay*2/3 {
		errorf(t, c, "left the barrier after %v, before rank 0 arrived (%v late)", d, delay)
	}
}

// reducerSizes are the tensors of the reducer checks: with 1 KiB buckets,
// several buckets, an empty tensor and one larger than a bucket.
var reducerSizes = []int{3, 700, 0, 17, 5000, 64, 64, 1}

// rankGrads returns rank r's gradients for the reducer checks: small
// integers times 1/8, so sums and means are exact.
func rankGrads(r int) [][]float32 {
	g := make([][]float32, len(reducerSizes))
	for i, n := range reducerSizes {
		g[i] = make([]float32, n)
		for j := range g[i] {
			g[i][j] = float32((r*7+i*3+j)%11-5) / 8
		}
	}
	return g
}

// meanGrads returns the mean of rankGrads over n ranks, computed as the
// reducer does (sum in float32, times 1/n).
func meanGrads(n int) [][]float32 {
	want := rankGrads(0)
	for q := 1; q < n; q++ {
		for i, g := range rankGrads(q) {
			for j, v := range g {
				want[i][j] += v
			}
		}
	}
	for _, g := range want {
		for j := range g {
			g[j] *= 1 / float32(n)
		}
	}
	return want
}

// compareGrads reports the first element of got that differs from want.
func compareGrads(t *testing.T, c Communicator, what string, got, want [][]float32) {
	t.Helper()
	for i := range want {
		for j := range want[i] {
			if got[i][j] != want[i][j] {
				errorf(t, c, "%s: tensor %d [%d] = %v, want %v", what, i, j, got[i][j], want[i][j])
				return
			}
		}
	}
}

// checkReducer averages rank-dependent gradients with AllreduceMean, twice
// to reuse the buffers.
func checkReducer(t *testing.T, c Communicator) {
	t.Helper()
	red, err := NewReducer(c, reducerSizes, 1024)
	if err != nil {
		errorf(t, c, "NewReducer: %v", err)
		return
	}
	if len(red.Buckets()) < 3 {
		errorf(t, c, "%d buckets, want several", len(red.Buckets()))
	}
	want := meanGrads(c.Size())
	for step := range 2 {
		g := rankGrads(c.Rank())
		if err := red.AllreduceMean(g); err != nil {
			errorf(t, c, "AllreduceMean step %d: %v", step, err)
		}
		compareGrads(t, c, fmt.Sprintf("AllreduceMean step %d", step), g, want)
	}
}

// checkReducerAsync averages with Start, Ready and Wait, each rank marking
// the tensors ready in its own order.
func checkReducerAsync(t *testing.T, c Communicator) {
	t.Helper()
	red, err := NewReducer(c, reducerSizes, 1024)
	if err != nil {
		errorf(t, c, "NewReducer: %v", err)
		return
	}
	defer red.Close()
	want := meanGrads(c.Size())
	nt := len(reducerSizes)
	for step := range 2 {
		g := rankGrads(c.Rank())
		if err := red.Start(g); err != nil {
			errorf(t, c, "Start: %v", err)
			return
		}
		for k := range nt {
			i := nt - 1 - k // backward order
			if (c.Rank()+step)%2 == 1 {
				i = (k*5 + c.Rank()) % nt // a scrambled order; 5 is prime to nt
			}
			if err := red.Ready(i); err != nil {
				errorf(t, c, "Ready(%d): %v", i, err)
			}
		}
		if err := red.Wait(); err != nil {
			errorf(t, c, "Wait step %d: %v", step, err)
		}
		compareGrads(t, c, fmt.Sprintf("Start/Ready/Wait step %d", step), g, want)
	}
}

// checkReplicas checks that equal parameters pass and that a change on the
// last rank is named on every rank.
func checkReplicas(t *testing.T, c Communicator) {
	t.Helper()
	p := rankGrads(0)
	if err := CheckReplicas(c, p); err != nil {
		errorf(t, c, "CheckReplicas of equal parameters: %v", err)
	}
	n := c.Size()
	if n == 1 {
		return
	}
	if c.Rank() == n-1 {
		p[4][123] += 1.0 / 1024
	}
	err := CheckReplicas(c, p)
	if err == nil {
		errorf(t, c, "CheckReplicas: rank %d changed a weight, no error", n-1)
		return
	}
	if msg := err.Error(); !strings.Contains(msg, fmt.Sprintf("rank %d (", n-1)) || !strings.Contains(msg, fmt.Sprintf("1 of %d ranks differ", n)) {
		errorf(t, c, "CheckReplicas error %q does not name rank %d alone", msg, n-1)
	}
	if errors.Is(err, ErrClosed) {
		errorf(t, c, "CheckReplicas: %v", err)
	}
}
