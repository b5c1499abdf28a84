package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/vit-train/vit-train/comm"
	"github.com/vit-train/vit-train/formats/metrics"
	"github.com/vit-train/vit-train/train/checkpoint"
)

// groupRun is one rank's outcome in runGroup.
type groupRun struct {
	tr  *trainer
	sum *Summary
	err error
	out strings.Builder
}

// runGroup runs cfg as a job of n ranks of a comm.NewGroup, each in its
// goroutine with its own trainer, all with run folder dir (which rank 0
// alone writes), resuming when dir holds a checkpoint. stop, when not nil,
// is called at each hook point of each rank and cancels that rank's
// context when it returns true. A rank whose run fails for another reason
// than an interrupt aborts the group, so that the others do not wait.
func runGroup(t *testing.T, n int, cfg Config, dir string, stopAfter int, stop func(rank int, p LoopPoint, s checkpoint.State) bool) []*groupRun {
	t.Helper()
	cs, err := comm.NewGroup(n)
	if err != nil {
		t.Fatal(err)
	}
	_, statErr := os.Stat(filepath.Join(dir, LastCheckpoint))
	runs := make([]*groupRun, n)
	var wg sync.WaitGroup
	for r := range n {
		runs[r] = &groupRun{}
		wg.Add(1)
		go func(g *groupRun, c comm.Communicator) {
			defer wg.Done()
			defer c.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			opts := Options{Dir: dir, Resume: statErr == nil, Comm: c, Out: &g.out, Hooks: Hooks{At: StopAfterSteps(stopAfter)}}
			if stop != nil {
				opts.Hooks.At = func(p LoopPoint, s checkpoint.State) bool {
					if stop(c.Rank(), p, s) {
						cancel()
					}
					return false
				}
			}
			tr, err := newTrainer(cfg, opts)
			if err != nil {
				g.err = err
				c.Abort(1, fmt.Sprintf("rank %d: %v", c.Rank(), err))
				return
			}
			defer tr.close()
			g.tr = tr
			g.sum, g.err = tr.run(ctx)
			if g.err != nil && !errors.Is(g.err, ErrInterrupted) {
				c.Abort(1, fmt.Sprintf("rank %d: %v", c.Rank(), g.err))
			}
		}(runs[r], cs[r])
	}
	wg.Wait()
	return runs
}

// relDiff is ‖a − b‖ / ‖b‖.
func relDiff(a, b []float32) float64 {
	var d, n float64
	for i := range a {
		x := float64(a[i]) - float64(b[i])
		d += x * x
		n += float64(b[i]) * float64(b[i])
	}
	if n == 0 {
		return math.Sqrt(d)
	}
	return math.Sqrt(d / n)
}

// closeCheckpoints fails unless the last checkpoints of two run folders
// hold the same position and weights within tol (relative, per tensor).
// With skipKeyBias the key third of each attn.qkv.bias is left out: the
// loss does not depend on it (softmax is invariant to a shift of a query's
// scores), so its gradient is rounding noise, which AdamW's normalised
// update turns into steps of the learning rate's size.
func closeCheckpoints(t *testing.T, a, b string, tol float64, skipKeyBias bool) {
	t.Helper()
	ca, err := LoadCheckpoint(filepath.Join(a, LastCheckpoint))
	if err != nil {
		t.Fatal(err)
	}
	cb, err := LoadCheckpoint(filepath.Join(b, LastCheckpoint))
	if err != nil {
		t.Fatal(err)
	}
	if ca.State.Epoch != cb.State.Epoch || ca.State.Step != cb.State.Step || ca.State.Batch != cb.State.Batch {
		t.Fatalf("positions differ: %+v and %+v", ca.State, cb.State)
	}
	other := tensorsByName(cb.Params)
	worst, name := 0.0, ""
	for _, p := range ca.Params {
		q, ok := other[p.Name]
		if !ok || len(q) != len(p.Data) {
			t.Fatalf("tensor %s missing or of another size", p.Name)
		}
		x, y := p.Data, q
		if skipKeyBias && strings.HasSuffix(p.Name, "attn.qkv.bias") {
			d := len(x) / 3
			x = append(append([]float32(nil), x[:d]...), x[2*d:]...)
			y = append(append([]float32(nil), y[:d]...), y[2*d:]...)
		}
		if d := relDiff(x, y); d > worst || math.IsNaN(d) {
			worst, name = d, p.Name
		}
	}
	if !(worst <= tol) {
		t.Fatalf("tensor %s differs by %.3g relative, want <= %g", name, worst, tol)
	}
	t.Logf("weights agree within %.3g relative (worst %s)", worst, name)
}

// closeSteps fails unless two steps logs hold the same steps with losses
// (and each logged loss term) within tol relative, and the same lr.
func closeSteps(t *testing.T, a, b string, tol float64) {
	t.Helper()
	sa, sb := readSteps(t, a), readSteps(t, b)
	if len(sa) != len(sb) || len(sa) == 0 {
		t.Fatalf("%d and %d step records", len(sa), len(sb))
	}
	for i := range sa {
		for k, v := range sa[i] {
			if k == "images_per_s" {
				continue
			}
			w := sb[i][k]
			if d := math.Abs(v - w); d > tol*math.Abs(w) && d > 1e-12 {
				t.Fatalf("step %d: %s %v with 2 ranks, %v with 1", i+1, k, v, w)
			}
		}
	}
}

// checkRanksAgree fails unless every rank of runs ended at the same
// position with bit-identical weights.
func checkRanksAgree(t *testing.T, runs []*groupRun) {
	t.Helper()
	p0 := runs[0].tr.step.Params()
	for r, g := range runs[1:] {
		if g.tr.state != runs[0].tr.state {
			t.Fatalf("rank %d ended at %+v, rank 0 at %+v", r+1, g.tr.state, runs[0].tr.state)
		}
		for i, p := range g.tr.step.Params() {
			if relDiff(p.Data, p0[i].Data) != 0 {
				t.Fatalf("rank %d: tensor %s differs from rank 0's", r+1, p.Name)
			}
		}
	}
}

// checkNoErrors fails on any rank's error.
func checkNoErrors(t *testing.T, runs []*groupRun) {
	t.Helper()
	for r, g := range runs {
		if g.err != nil {
			t.Fatalf("rank %d: %v", r, g.err)
		}
	}
}

// dataParallelConfig is 3 epochs of 6 steps of 16 images without dropout,
// drop-path or Mixup.
func dataParallelConfig(t *testing.T, batch int, sets ...string) Config {
	return tinyConfig(t, append([]string{"epochs=3", fmt.Sprintf("data.batch_size=%d", batch), "aug.mixup=0", "aug.cutmix=0",
		"optim.name=sgd", "optim.lr=0.05", "optim.momentum=0.9"}, sets...)...)
}

// TestDataParallelMatchesOneProcess trains 2 ranks with batches of 8 and
// one process with batches of 16, a ViT (SGD with momentum, and AdamW) and
// a DeiT distilled by a ResNet teacher (hard): losses, learning rates,
// evaluations and final weights agree within 1e-5 relative; only rank 0
// writes and prints.
func TestDataParallelMatchesOneProcess(t *testing.T) {
	cases := []struct {
		name  string
		adamw bool
		sets  func() []string
	}{
		{"vit", false, func() []string { return nil }},
		{"vit-adamw", true, func() []string { return []string{"optim.name=adamw", "optim.lr=1e-3"} }},
		{"deit-hard", false, func() []string {
			return []string{"model.name=deit_fmnist_distilled_patch4_28", "distill.type=hard", "distill.teacher=" + tinyResNet(t)}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sets := c.sets()
			one, two := t.TempDir(), t.TempDir()
			if _, err := Run(context.Background(), dataParallelConfig(t, 16, sets...), Options{Dir: one}); err != nil {
				t.Fatal(err)
			}
			runs := runGroup(t, 2, dataParallelConfig(t, 8, sets...), two, 0, nil)
			checkNoErrors(t, runs)
			checkRanksAgree(t, runs)
			if s := readSteps(t, two); len(s) != 18 {
				t.Fatalf("%d steps, want 18", len(s))
			}
			closeSteps(t, two, one, 1e-5)
			closeCheckpoints(t, two, one, 1e-5, c.adamw)
			e1, err := metrics.Read(one, "epochs")
			if err != nil {
				t.Fatal(err)
			}
			e2, err := metrics.Read(two, "epochs")
			if err != nil {
				t.Fatal(err)
			}
			for i := range e1 {
				for _, k := range []string{"val_top1", "val_top5", "val_top1_cls", "val_top1_dist", "teacher_top1"} {
					if e1[i][k] != e2[i][k] && !(math.IsNaN(e1[i][k]) && math.IsNaN(e2[i][k])) {
						t.Fatalf("epoch %d: %s %v with 2 ranks, %v with 1", i+1, k, e2[i][k], e1[i][k])
					}
				}
			}
			for r, g := range runs {
				if g.sum.Last.N != 48 {
					t.Fatalf("rank %d evaluated %d images, want 48", r, g.sum.Last.N)
				}
				if g.sum.Last.Top1 != runs[0].sum.Last.Top1 {
					t.Fatalf("rank %d top-1 %v, rank 0 %v", r, g.sum.Last.Top1, runs[0].sum.Last.Top1)
				}
			}
			if !strings.Contains(runs[0].out.String(), "global batch 16") || runs[1].out.Len() != 0 {
				t.Fatalf("rank 0 printed %q; rank 1 printed %q", runs[0].out.String(), runs[1].out.String())
			}
		})
	}
}

// TestDataParallelResumeIsExact interrupts a 2-rank run mid-epoch (a stop
// requested on rank 1 only after step 4, which both ranks honour before
// step 5) and
// resumes it with 2 ranks: it ends equal to an uninterrupted 2-rank run.
func TestDataParallelResumeIsExact(t *testing.T) {
	cfg := dataParallelConfig(t, 8, "epochs=2")
	full, split := t.TempDir(), t.TempDir()
	checkNoErrors(t, runGroup(t, 2, cfg, full, 0, nil))
	runs := runGroup(t, 2, cfg, split, 0, func(rank int, p LoopPoint, s checkpoint.State) bool {
		return rank == 1 && p == AfterStep && s.Step == 4
	})
	for r, g := range runs {
		if !errors.Is(g.err, ErrInterrupted) || g.tr.state.Step != 4 || g.tr.state.Batch != 4 {
			t.Fatalf("rank %d: %v at %+v, want an interrupt after step 4", r, g.err, g.tr.state)
		}
	}
	if !strings.Contains(runs[0].out.String(), "interrupted at epoch 1, batch 4 (step 4)") {
		t.Fatalf("rank 0 printed %q", runs[0].out.String())
	}
	ck, err := LoadCheckpoint(filepath.Join(split, LastCheckpoint))
	if err != nil || ck.State.Step != 4 || ck.State.Replicas != 2 {
		t.Fatalf("checkpoint %+v, %v", ck, err)
	}
	runs = runGroup(t, 2, cfg, split, 0, nil)
	checkNoErrors(t, runs)
	checkRanksAgree(t, runs)
	sameCheckpoints(t, filepath.Join(full, LastCheckpoint), filepath.Join(split, LastCheckpoint))
	checkStepLog(t, split, readSteps(t, full))
}

// TestResumeWithOtherProcessCount resumes a 2-rank checkpoint with one
// process and a one-process checkpoint with 2 ranks: the position is
// converted (and said so), and the runs end close to uninterrupted ones.
func TestResumeWithOtherProcessCount(t *testing.T) {
	// 2 ranks × 8 → 1 × 8: a step of 16 images becomes 2 steps of 8.
	cfg := dataParallelConfig(t, 8, "epochs=2", "sched.name=constant", "sched.warmup_epochs=0")
	dir := t.TempDir()
	runs := runGroup(t, 2, cfg, dir, 2, nil)
	if !errors.Is(runs[0].err, ErrInterrupted) {
		t.Fatalf("want an interrupt, got %v", runs[0].err)
	}
	var out strings.Builder
	sum, err := Run(context.Background(), cfg, Options{Dir: dir, Resume: true, Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "written by 2 process(es), this job has 1") || !strings.Contains(out.String(), "becomes batch 4, step 4") {
		t.Fatalf("no note of the conversion in:\n%s", out.String())
	}
	if sum.State.Step != 24 || sum.State.Replicas != 0 || sum.Last.N != 48 {
		t.Fatalf("ended at %+v after %d evaluation images", sum.State, sum.Last.N)
	}

	// 1 × 16 → 2 ranks × 16 at an odd step is refused, at an even one works.
	cfg = dataParallelConfig(t, 16, "epochs=2")
	odd, even := t.TempDir(), t.TempDir()
	if _, err := Run(context.Background(), cfg, Options{Dir: odd, Hooks: Hooks{At: StopAfterSteps(3)}}); !errors.Is(err, ErrInterrupted) {
		t.Fatal(err)
	}
	runs = runGroup(t, 2, cfg, odd, 0, nil)
	if runs[0].err == nil || !strings.Contains(runs[0].err.Error(), "resume with 1 processes") {
		t.Fatalf("want a refusal to resume mid-step, got %v", runs[0].err)
	}
	if _, err := Run(context.Background(), cfg, Options{Dir: even, Hooks: Hooks{At: StopAfterSteps(4)}}); !errors.Is(err, ErrInterrupted) {
		t.Fatal(err)
	}
	runs = runGroup(t, 2, cfg, even, 0, nil)
	checkNoErrors(t, runs)
	checkRanksAgree(t, runs)
	if s := runs[0].sum.State; s.Step != 6 || s.Epoch != 2 || s.Replicas != 2 {
		t.Fatalf("ended at %+v, want step 6 of epoch 2 (3 steps per epoch)", s)
	}
}

// TestDataParallelResNetSharesBatchNormStatistics trains a ResNet with 2
// ranks, whose batch-norm running statistics follow their own shards: every
// rank evaluates with rank 0's (the ranks end with the same buffers), so
// the reported top-1 is that of the checkpoint rank 0 writes (the loss up
// to the rounding of a sum taken in another order).
func TestDataParallelResNetSharesBatchNormStatistics(t *testing.T) {
	cfg := dataParallelConfig(t, 8, "model.name=resnet20", "epochs=1", "data.eval_subset=200", "data.eval_batch_size=50")
	dir := t.TempDir()
	runs := runGroup(t, 2, cfg, dir, 0, nil)
	checkNoErrors(t, runs)
	checkRanksAgree(t, runs)
	b0, b1 := runs[0].tr.eval.buffers, runs[1].tr.eval.buffers
	if len(b0) == 0 || len(b0) != len(b1) {
		t.Fatalf("buffers: %d on rank 0, %d on rank 1; want the same number, more than 0", len(b0), len(b1))
	}
	for i := range b0 {
		if relDiff(b1[i], b0[i]) != 0 {
			t.Fatalf("buffer %d differs between the ranks after the evaluation", i)
		}
	}
	r, err := OpenEval(filepath.Join(dir, LastCheckpoint), EvalOptions{Sets: []string{"data.eval_subset=200", "data.eval_batch_size=50"}})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Graph.Frozen() {
		t.Fatal("OpenEval's graph is not frozen")
	}
	ev, err := Evaluate(context.Background(), r.Graph, r.Loader)
	if err != nil {
		t.Fatal(err)
	}
	if got := runs[0].sum.Last; ev.N != 200 || got.Top1 != ev.Top1 || math.Abs(got.Loss-ev.Loss) > 1e-6*ev.Loss {
		t.Fatalf("the run reported top-1 %v, loss %v; its checkpoint evaluates to %v, %v on %d images", got.Top1, got.Loss, ev.Top1, ev.Loss, ev.N)
	}
}
