// Command mpiprobe runs one rank of a small job that exercises package comm
// under an MPI launcher:
//
//	mpirun -np 2 mpiprobe          # every rank reports its rank after an allreduce
//	mpirun -np 2 mpiprobe -abort   # the last rank aborts with code 7 while the others wait
//	mpirun -np 2 mpiprobe -abort-busy # likewise, while its MPI thread is blocked in a collective
//	mpirun -np 2 mpiprobe -bench   # allreduce (sum, float32) time and bandwidth by size
//
// Built without the tag mpi and started as one of several processes, it
// reports the error of comm.FromEnv and exits with status 2.
package main

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/vit-train/vit-train/comm"
)

func main() {
	abort := flag.Bool("abort", false, "the last rank aborts the job with code 7 while the others wait in a barrier")
	abortBusy := flag.Bool("abort-busy", false, "the last rank aborts the job with code 7 while its MPI thread is blocked in a broadcast that never completes")
	bench := flag.Bool("bench", false, "measure allreduce time and bandwidth for buffers of 1 KiB to 100 MB")
	target := flag.Duration("target", 300*time.Millisecond, "time to spend per buffer size with -bench")
	flag.Parse()

	c, err := comm.FromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, "mpiprobe:", err)
		os.Exit(2)
	}
	switch {
	case *abort:
		err = runAbort(c)
	case *abortBusy:
		err = runAbortBusy(c)
	case *bench:
		err = runBench(c, *target)
	default:
		err = runHello(c)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "mpiprobe: rank %d: %v\n", c.Rank(), err)
		c.Abort(1, err.Error())
	}
	if err := c.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "mpiprobe: rank %d: %v\n", c.Rank(), err)
		os.Exit(1)
	}
}

// runHello sums the ranks and prints what this rank sees.
func runHello(c comm.Communicator) error {
	buf := []int64{int64(c.Rank())}
	if err := c.AllreduceSumInt64(buf); err != nil {
		return err
	}
	n := int64(c.Size())
	if want := n * (n - 1) / 2; buf[0] != want {
		return fmt.Errorf("sum of ranks %d, want %d", buf[0], want)
	}
	fmt.Printf("rank %d of %d: sum of ranks %d (mpi build: %v)\n", c.Rank(), c.Size(), buf[0], comm.WithMPI)
	return nil
}

// runAbort aborts the job from the last rank once every rank has started;
// the other ranks wait in a barrier that the last rank never joins.
func runAbort(c comm.Communicator) error {
	if err := c.Barrier(); err != nil {
		return err
	}
	if c.Rank() == c.Size()-1 {
		time.Sleep(100 * time.Millisecond)
		c.Abort(7, "mpiprobe -abort")
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	return fmt.Errorf("left a barrier that the aborting rank never joined")
}

// runAbortBusy aborts the job from the last rank while that rank's MPI
// thread waits in a broadcast from rank 0, which rank 0 never starts.
func runAbortBusy(c comm.Communicator) error {
	if err := c.Barrier(); err != nil {
		return err
	}
	if c.Size() < 2 {
		return fmt.Errorf("-abort-busy needs two ranks or more")
	}
	if c.Rank() == c.Size()-1 {
		go func() { _ = c.BroadcastBytes(make([]byte, 8), 0) }()
		time.Sleep(100 * time.Millisecond)
		c.Abort(7, "mpiprobe -abort-busy")
	}
	time.Sleep(time.Minute)
	return fmt.Errorf("still running a minute after the last rank aborted")
}

// runBench times in-place float32 sum allreduces, one call at a time. Rank 0
// picks each size's call count and broadcasts it, so every rank makes the
// same calls; a call's time is the slowest rank's. It prints the fastest,
// median and mean call, and the bandwidths of the fastest and the median:
// algbw = bytes / time, busbw = algbw · 2(N-1)/N (the traffic of a ring
// allreduce, comparable across N).
func runBench(c comm.Communicator, target time.Duration) error {
	sizes := []int{1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20, 100_000_000}
	n := c.Size()
	if c.Rank() == 0 {
		fmt.Printf("allreduce sum float32 in place, %d ranks; time per call (slowest rank)\n", n)
		fmt.Printf("%11s %6s %11s %11s %11s %9s %9s %9s\n", "bytes", "calls", "min", "median", "mean", "algbw", "busbw", "busbw")
		fmt.Printf("%11s %6s %11s %11s %11s %9s %9s %9s\n", "", "", "", "", "", "min GB/s", "min GB/s", "med GB/s")
	}
	buf := make([]float32, sizes[len(sizes)-1]/4)
	calls := make([]int64, 1)
	times := make([]float64, 10000)
	for _, bytes := range sizes {
		b := buf[:bytes/4]
		for i := range b {
			b[i] = 1
		}
		// Warm up, then time one call to choose the count.
		t0 := time.Now()
		for range 2 {
			if err := c.AllreduceSumFloat32(b); err != nil {
				return err
			}
		}
		one := time.Since(t0) / 2
		calls[0] = int64(max(5, min(len(times), int(target/max(one, time.Microsecond)))))
		if err := c.BroadcastInt64(calls, 0); err != nil {
			return err
		}
		ts := times[:calls[0]]
		for i := range ts {
			if err := c.Barrier(); err != nil {
				return err
			}
			t0 := time.Now()
			if err := c.AllreduceSumFloat32(b); err != nil {
				return err
			}
			ts[i] = time.Since(t0).Seconds()
		}
		if err := c.AllreduceMaxFloat64(ts); err != nil {
			return err
		}
		if c.Rank() != 0 {
			continue
		}
		sort.Float64s(ts)
		mean := 0.0
		for _, t := range ts {
			mean += t
		}
		mean /= float64(len(ts))
		lo, med := ts[0], ts[len(ts)/2]
		bus := 2 * float64(n-1) / float64(n)
		if n == 1 {
			bus = 0
		}
		fmt.Printf("%11d %6d %11s %11s %11s %9.3f %9.3f %9.3f\n", bytes, len(ts),
			dur(lo), dur(med), dur(mean), float64(bytes)/lo/1e9, float64(bytes)/lo/1e9*bus, float64(bytes)/med/1e9*bus)
	}
	return nil
}

// dur rounds seconds to a readable duration.
func dur(s float64) time.Duration {
	d := time.Duration(s * 1e9)
	switch {
	case d < time.Millisecond:
		return d.Round(100 * time.Nanosecond)
	case d < time.Second:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Millisecond)
}
