package comm

import (
	"errors"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestLocal(t *testing.T) {
	c := Local()
	if c.Rank() != 0 || c.Size() != 1 {
		t.Fatalf("Local: rank %d of %d", c.Rank(), c.Size())
	}
	f32 := []float32{1, -2, 3}
	i64 := []int64{5, -1 << 40}
	b := []byte("abc")
	for _, err := range []error{
		c.AllreduceSumFloat32(f32), c.AllreduceSumInt64(i64), c.AllreduceMaxInt64(i64),
		c.BroadcastBytes(b, 0), c.Barrier(),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(f32, []float32{1, -2, 3}) || !reflect.DeepEqual(i64, []int64{5, -1 << 40}) || string(b) != "abc" {
		t.Errorf("Local changed its buffers: %v %v %q", f32, i64, b)
	}
	if err := c.BroadcastFloat64(make([]float64, 2), 1); err == nil {
		t.Error("Local: broadcast from root 1: no error")
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.AllreduceSumFloat64([]float64{1}); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v, want ErrClosed", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestLocalSuite runs the collective suite on a job of one.
func TestLocalSuite(t *testing.T) { suiteCheck(t, Local()) }

// runGroup runs f on every member of a group of n, each on its goroutine.
func runGroup(t *testing.T, n int, f func(c Communicator)) {
	t.Helper()
	cs, err := NewGroup(n)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(c)
		}()
	}
	wg.Wait()
}

func TestGroupSuite(t *testing.T) {
	for _, n := range []int{1, 2, 3, 4} {
		runGroup(t, n, func(c Communicator) { suiteCheck(t, c) })
	}
}

func TestGroupMismatch(t *testing.T) {
	errs := make([]error, 3)
	runGroup(t, 3, func(c Communicator) {
		switch c.Rank() {
		case 0:
			errs[0] = c.AllreduceSumFloat32(make([]float32, 4))
		case 1:
			errs[1] = c.AllreduceSumFloat32(make([]float32, 5))
		case 2:
			errs[2] = c.AllreduceSumFloat64(make([]float64, 4))
		}
	})
	for r, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "collective mismatch") {
			t.Errorf("rank %d: %v, want a collective mismatch", r, err)
		}
	}
}

func TestGroupClose(t *testing.T) {
	cs, err := NewGroup(2)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() { done <- cs[0].Barrier() }()
	time.Sleep(20 * time.Millisecond)
	if err := cs[1].Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "rank 1 closed") {
			t.Errorf("Barrier with a closed member: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Barrier with a closed member did not return")
	}
	if err := cs[1].Barrier(); !errors.Is(err, ErrClosed) {
		t.Errorf("Barrier of the closed member: %v", err)
	}
}

func TestGroupAbort(t *testing.T) {
	errs := make([]error, 3)
	runGroup(t, 3, func(c Communicator) {
		if c.Rank() == 2 {
			time.Sleep(20 * time.Millisecond)
			c.Abort(9, "test abort")
			errs[2] = c.Barrier()
			return
		}
		errs[c.Rank()] = c.Barrier()
	})
	for r, err := range errs {
		if !errors.Is(err, ErrAborted) || !strings.Contains(err.Error(), "rank 2 aborted with code 9") {
			t.Errorf("rank %d after abort: %v", r, err)
		}
	}
}

func TestNewGroupSize(t *testing.T) {
	if _, err := NewGroup(0); err == nil {
		t.Error("NewGroup(0): no error")
	}
}

func TestBuckets(t *testing.T) {
	cases := []struct {
		sizes []int
		bytes int
		want  [][]int
	}{
		// 4-byte elements; a bucket closes once it holds >= 40 bytes.
		{[]int{5, 5, 5, 5}, 40, [][]int{{3, 2}, {1, 0}}},
		{[]int{5, 5, 5}, 40, [][]int{{2, 1}, {0}}},
		{[]int{1, 100, 2, 3}, 40, [][]int{{3, 2, 1}, {0}}},
		{[]int{100, 1, 1}, 40, [][]int{{2, 1, 0}}},
		{[]int{4, 0, 20, 0}, 40, [][]int{{2}, {0}}},
		{[]int{9, 9}, 40, [][]int{{1, 0}}},
		{nil, 40, nil},
		{[]int{0, 0}, 40, nil},
		// Default 25 MiB: 10 tensors of 1 Mi float32 (4 MiB each).
		{[]int{1 << 20, 1 << 20, 1 << 20, 1 << 20, 1 << 20, 1 << 20, 1 << 20, 1 << 20, 1 << 20, 1 << 20}, 0,
			[][]int{{9, 8, 7, 6, 5, 4, 3}, {2, 1, 0}}},
	}
	for _, tc := range cases {
		got, err := Buckets(tc.sizes, tc.bytes)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Buckets(%v, %d) = %v, want %v", tc.sizes, tc.bytes, got, tc.want)
		}
	}
	if _, err := Buckets([]int{1, -1}, 40); err == nil {
		t.Error("Buckets with a negative size: no error")
	}
}

func TestReducerErrors(t *testing.T) {
	if _, err := NewReducer(nil, []int{1}, 0); err == nil {
		t.Error("NewReducer(nil): no error")
	}
	red, err := NewReducer(Local(), []int{2, 3}, 8)
	if err != nil {
		t.Fatal(err)
	}
	if err := red.AllreduceMean([][]float32{make([]float32, 2)}); err == nil {
		t.Error("AllreduceMean with a missing tensor: no error")
	}
	if err := red.AllreduceMean([][]float32{make([]float32, 2), make([]float32, 4)}); err == nil {
		t.Error("AllreduceMean with a wrong size: no error")
	}
	if err := red.Ready(0); err == nil {
		t.Error("Ready before Start: no error")
	}
	g := [][]float32{{1, 2}, {3, 4, 5}}
	if err := red.Start(g); err != nil {
		t.Fatal(err)
	}
	if err := red.Start(g); err == nil {
		t.Error("Start twice: no error")
	}
	if err := red.Ready(2); err == nil {
		t.Error("Ready(2) of 2 tensors: no error")
	}
	if err := red.Ready(1); err != nil {
		t.Fatal(err)
	}
	if err := red.Ready(1); err == nil {
		t.Error("Ready(1) twice: no error")
	}
	if err := red.Wait(); err == nil || !strings.Contains(err.Error(), "tensor 0 never marked ready") {
		t.Errorf("Wait with tensor 0 not ready: %v", err)
	}
	// A gradient may be set as late as just before its Ready, and must
	// then have its size.
	late := make([][]float32, 2)
	if err := red.Start(late[:1]); err == nil || !strings.Contains(err.Error(), "1 gradient tensors, want 2") {
		t.Errorf("Start with a missing tensor: %v", err)
	}
	if err := red.Start(late); err != nil {
		t.Fatalf("Start with gradients still to come: %v", err)
	}
	late[1] = make([]float32, 2)
	if err := red.Ready(1); err == nil || !strings.Contains(err.Error(), "gradient 1 has 2 elements, want 3") {
		t.Errorf("Ready with a wrong size: %v", err)
	}
	late[0] = []float32{1, 2}
	if err := red.Ready(0); err != nil {
		t.Error(err)
	}
	_ = red.Wait()
	red.Close()
	// Size 1: the mean is the tensor itself.
	if err := red.AllreduceMean(g); err != nil || !reflect.DeepEqual(g, [][]float32{{1, 2}, {3, 4, 5}}) {
		t.Errorf("AllreduceMean on Local: %v, %v", err, g)
	}
}

// TestReducerAllocs checks that after the first step a bucketed mean over two
// ranks allocates nothing, on either rank, synchronous or overlapped; and
// none over Local.
func TestReducerAllocs(t *testing.T) {
	const runs = 20
	sizes := []int{1000, 10, 3000, 7, 500}
	for _, async := range []bool{false, true} {
		cs, err := NewGroup(2)
		if err != nil {
			t.Fatal(err)
		}
		step := func(red *Reducer, g [][]float32) error {
			if !async {
				return red.AllreduceMean(g)
			}
			if err := red.Start(g); err != nil {
				return err
			}
			for i := len(g) - 1; i >= 0; i-- {
				if err := red.Ready(i); err != nil {
					return err
				}
			}
			return red.Wait()
		}
		var reds [2]*Reducer
		var grads [2][][]float32
		for r := range 2 {
			if reds[r], err = NewReducer(cs[r], sizes, 8000); err != nil {
				t.Fatal(err)
			}
			defer reds[r].Close()
			for _, n := range sizes {
				grads[r] = append(grads[r], make([]float32, n))
			}
		}
		// Rank 1 runs the first step and then as many as AllocsPerRun (which
		// runs its function once more than runs) on its own goroutine.
		peer := make(chan error, 1)
		go func() {
			for range runs + 2 {
				if err := step(reds[1], grads[1]); err != nil {
					peer <- err
					return
				}
			}
			peer <- nil
		}()
		if err := step(reds[0], grads[0]); err != nil {
			t.Fatal(err)
		}
		var stepErr error
		allocs := testing.AllocsPerRun(runs, func() {
			if err := step(reds[0], grads[0]); err != nil {
				stepErr = err
			}
		})
		if err := <-peer; err != nil || stepErr != nil {
			t.Fatalf("async=%v: %v %v", async, err, stepErr)
		}
		if allocs != 0 {
			t.Errorf("async=%v: %v allocations per step on two ranks, want 0", async, allocs)
		}
	}
	red, err := NewReducer(Local(), sizes, 8000)
	if err != nil {
		t.Fatal(err)
	}
	g := make([][]float32, len(sizes))
	for i, n := range sizes {
		g[i] = make([]float32, n)
	}
	if allocs := testing.AllocsPerRun(runs, func() { _ = red.AllreduceMean(g) }); allocs != 0 {
		t.Errorf("Local: %v allocations per step, want 0", allocs)
	}
}

func TestChecksum(t *testing.T) {
	a := [][]float32{{1, 2, 3}, {}, {4}}
	b := [][]float32{{1, 2}, {3, 4}}
	if Checksum(a) != Checksum(b) {
		t.Error("Checksum depends on how the bytes are split into tensors")
	}
	c := [][]float32{{1, 2, 3}, {4.000001}}
	if Checksum(a) == Checksum(c) {
		t.Error("Checksum did not change with a weight")
	}
	// CRC-32C of 00 00 80 3f (1.0 little-endian), from the definition.
	if got := Checksum([][]float32{{1}}); got != crc32cBitwise([]byte{0, 0, 0x80, 0x3f}) {
		t.Errorf("Checksum({1}) = %08x, want %08x", got, crc32cBitwise([]byte{0, 0, 0x80, 0x3f}))
	}
	if err := CheckReplicas(Local(), a); err != nil {
		t.Error(err)
	}
}

// crc32cBitwise is CRC-32C computed bit by bit (reflected polynomial
// 0x82F63B78).
func crc32cBitwise(b []byte) uint32 {
	crc := ^uint32(0)
	for _, x := range b {
		crc ^= uint32(x)
		for range 8 {
			if crc&1 == 1 {
				crc = crc>>1 ^ 0x82F63B78
			} else {
				crc >>= 1
			}
		}
	}
	return ^crc
}

// TestLocalAbort runs Local().Abort in a child process and checks its exit
// status and message.
func TestLocalAbort(t *testing.T) {
	if os.Getenv("COMM_TEST_LOCAL_ABORT") == "1" {
		Local().Abort(7, "local abort test")
		return
	}
	if n, _, _ := launcherSize(); n > 0 {
		t.Skip("under an MPI launcher: the child would inherit its environment")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestLocalAbort$")
	cmd.Env = append(os.Environ(), "COMM_TEST_LOCAL_ABORT=1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 7 {
		t.Fatalf("child: %v, want exit status 7; output:\n%s", err, out)
	}
	if !strings.Contains(string(out), "comm: rank 0 aborts the job: local abort test") {
		t.Errorf("child output lacks the abort message:\n%s", out)
	}
}

func TestExitCode(t *testing.T) {
	for code, want := range map[int]int{0: 1, -3: 1, 1: 1, 42: 42, 255: 255, 256: 1} {
		if got := exitCode(code); got != want {
			t.Errorf("exitCode(%d) = %d, want %d", code, got, want)
		}
	}
}
