//go:build mpi

package comm

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/vit-train/vit-train/internal/allocs"
)

// The TestMPI tests need a job of several processes; scripts/test_mpi.sh
// runs them:
//
//	go test -c -tags mpi -o /tmp/comm.test ./comm/
//	mpirun --allow-run-as-root --oversubscribe -np 2 /tmp/comm.test -test.run '^TestMPI'
//
// Outside mpirun they are skipped. Every rank runs the same tests in the same
// order, so their collectives pair up.

// world is the job's communicator under mpirun, nil otherwise.
var world Communicator

func TestMain(m *testing.M) {
	if n, _, _ := launcherSize(); n == 0 {
		os.Exit(m.Run())
	}
	c, err := InitMPI()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	world = c
	code := m.Run()
	if err := c.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

// needWorld skips a test outside mpirun.
func needWorld(t *testing.T) Communicator {
	t.Helper()
	if world == nil {
		t.Skip("not started by mpirun")
	}
	return world
}

func TestMPIRankSize(t *testing.T) {
	c := needWorld(t)
	size, _ := strconv.Atoi(os.Getenv("OMPI_COMM_WORLD_SIZE"))
	rank, _ := strconv.Atoi(os.Getenv("OMPI_COMM_WORLD_RANK"))
	if c.Size() != size || c.Rank() != rank {
		t.Errorf("rank %d of %d, the launcher says %d of %d", c.Rank(), c.Size(), rank, size)
	}
	again, err := FromEnv()
	if err != nil || again != c {
		t.Errorf("FromEnv after InitMPI: %v, %v; want the same communicator", again, err)
	}
	if !WithMPI {
		t.Error("WithMPI is false in the mpi build")
	}
}

// TestMPISuite runs the collective suite (allreduce of each type, broadcast,
// barrier, bucketed mean, overlapped mean, replica check) across the job.
func TestMPISuite(t *testing.T) { suiteCheck(t, needWorld(t)) }

// TestMPILarge reduces a buffer large enough for Open MPI to split it into
// segments.
func TestMPILarge(t *testing.T) {
	c := needWorld(t)
	const m = 3<<20 + 5
	buf := make([]float32, m)
	for i := range buf {
		buf[i] = float32(c.Rank() + i%1000)
	}
	if err := c.AllreduceSumFloat32(buf); err != nil {
		t.Fatal(err)
	}
	n := c.Size()
	for i, v := range buf {
		if want := float32(n*(n-1)/2 + n*(i%1000)); v != want {
			t.Fatalf("rank %d: [%d] = %v, want %v", c.Rank(), i, v, want)
		}
	}
}

// TestMPIAllocs checks that a collective call and a bucketed mean allocate no
// Go memory once warm. Every rank runs the same number of calls. A count
// below one per call is the runtime's, not the call's: a goroutine that waits
// on the locked MPI thread may make the scheduler start an OS thread, which
// allocates its records.
func TestMPIAllocs(t *testing.T) {
	c := needWorld(t)
	buf := make([]float32, 1000)
	if a := allocs.LeastOfTries(20, func() { _ = c.AllreduceSumFloat32(buf) }); a >= 0.5 {
		t.Errorf("rank %d: AllreduceSumFloat32: %v allocations per call", c.Rank(), a)
	}
	red, err := NewReducer(c, reducerSizes, 1024)
	if err != nil {
		t.Fatal(err)
	}
	g := rankGrads(c.Rank())
	if a := allocs.LeastOfTries(20, func() { _ = red.AllreduceMean(g) }); a >= 0.5 {
		t.Errorf("rank %d: AllreduceMean: %v allocations per step", c.Rank(), a)
	}
}

// TestMPIGoPanics checks that Go still turns a nil dereference into a panic
// once MPI runs: Open MPI installs its SIGSEGV handler only where none is
// installed, and the Go runtime's is.
func TestMPIGoPanics(t *testing.T) {
	needWorld(t)
	var p *int
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	_ = *p
}

func TestMPIErrors(t *testing.T) {
	c := needWorld(t)
	if err := c.BroadcastInt64(make([]int64, 1), -1); err == nil {
		t.Error("broadcast from root -1: no error")
	}
	if err := c.BroadcastInt64(make([]int64, 1), c.Size()); err == nil {
		t.Errorf("broadcast from root %d: no error", c.Size())
	}
}
