package main

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vit-train/vit-train/formats/atomicfile"
	"github.com/vit-train/vit-train/formats/metrics"
	"github.com/vit-train/vit-train/formats/tfevents"
	"github.com/vit-train/vit-train/train"
)

// crashArgs is the crash test's run: 3 epochs of 16 batches of the small
// ViT with EMA, Mixup/CutMix and drop-path, evaluated on 200 images,
// writing TensorBoard event files; a few seconds in all.
var crashArgs = []string{"train", "--set", "data.train_subset=512", "--set", "data.batch_size=32",
	"--set", "data.eval_subset=200", "--set", "data.eval_batch_size=200", "--set", "epochs=3",
	"--set", "progress=false", "--set", "model.drop_path_rate=0.1",
	"--set", "ema.enabled=true", "--set", "ema.decay=0.99", "--set", "aug.mixup=0.8", "--set", "aug.cutmix=1.0",
	"--set", "tensorboard=true"}

// envInt reads a non-negative integer from the environment (0 if unset).
func envInt(t *testing.T, name string) int {
	v := os.Getenv(name)
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		t.Fatalf("%s=%q: want a non-negative integer", name, v)
	}
	return n
}

// TestCrashResume kills training runs at random moments and resumes them
// after each kill, until VIT_CRASH_KILLS SIGKILLs (and VIT_CRASH_SIGNALS
// SIGINTs, every fourth a SIGTERM, with optim.accum_steps=2) have been
// sent; every run, finished by a last resume, must end with the weights,
// optimiser state, EMA weights and run state of an uninterrupted run, bit
// for bit, and logs holding each step once with the same losses.
// With VIT_CRASH_PREPARED set, the runs train on the embedded subset
// prepared by vit-train prepare (JPEG); VIT_CRASH_PRECISION sets
// model.precision (mixed: the processor's low-precision products, the AMX
// tiles where they run). scripts/crash_test.sh runs it;
// without VIT_CRASH_KILLS it is skipped.
func TestCrashResume(t *testing.T) {
	kills, sigs := envInt(t, "VIT_CRASH_KILLS"), envInt(t, "VIT_CRASH_SIGNALS")
	if kills == 0 && sigs == 0 {
		t.Skip("set VIT_CRASH_KILLS (and VIT_CRASH_SIGNALS), or run scripts/crash_test.sh")
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("VIT_CRASH_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("VIT_CRASH_SEED=%q: %v", s, err)
		}
	}
	t.Logf("VIT_CRASH_SEED=%d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	bin := buildBinary(t)
	args := slices.Clone(crashArgs)
	if os.Getenv("VIT_CRASH_PREPARED") != "" {
		args = append(args, preparedData(t, bin)...)
	}
	if p := os.Getenv("VIT_CRASH_PRECISION"); p != "" {
		args = append(args, "--set", "model.precision="+p)
	}
	if kills > 0 {
		// The first step record (step 40) comes after the first checkpoint
		// (step 16): kills meet empty, partial and full logs.
		c := crasher{t: t, bin: bin, args: append(slices.Clone(args), "--set", "log_every=40"), rng: rng, name: "SIGKILL",
			signal: func(int) syscall.Signal { return syscall.SIGKILL }}
		c.rounds(kills)
	}
	if sigs > 0 {
		// 8 steps of 2 micro-batches per epoch, logged every 3 steps.
		c := crasher{t: t, bin: bin, args: append(slices.Clone(args), "--set", "optim.accum_steps=2", "--set", "log_every=3"), rng: rng,
			name: "SIGINT/SIGTERM", signal: func(i int) syscall.Signal {
				if i%4 == 3 {
					return syscall.SIGTERM
				}
				return syscall.SIGINT
			}}
		c.rounds(sigs)
	}
}

// preparedData prepares the embedded Fashion-MNIST subset as JPEGs with
// bin and returns the settings that train on it.
func preparedData(t *testing.T, bin string) []string {
	dir := t.TempDir()
	cmd := exec.Command(bin, "prepare", "--dataset", "fashion-mnist-embedded", "--out", dir, "--quality", "90")
	var progress bytes.Buffer
	cmd.Stderr = &progress
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("vit-train prepare: %v\n%s%s", err, out, progress.Bytes())
	}
	t.Logf("training on a prepared set: %s", bytes.TrimSpace(out))
	return []string{"--set", "data.dataset=prepared", "--set", "data.root=" + dir}
}

// crasher interrupts runs of one configuration.
type crasher struct {
	t      *testing.T
	bin    string
	args   []string
	rng    *rand.Rand
	name   string                     // of the signals, for the log
	signal func(i int) syscall.Signal // the i-th signal to send

	ref      string        // the uninterrupted run's folder
	duration time.Duration // the uninterrupted run's wall time
	sent     int           // signals sent
	// Outcomes of the signals: exits with the signal's status after saving
	// a checkpoint, deaths by the signal (SIGKILL, or a signal before the
	// handler was installed), and kills before the first checkpoint.
	saved, died, early int
}

// start runs the binary on dir, resuming when dir holds a checkpoint.
func (c *crasher) start(dir string) (*exec.Cmd, *bytes.Buffer) {
	args := append(slices.Clone(c.args), "--out", dir)
	if _, err := os.Stat(filepath.Join(dir, train.LastCheckpoint)); err == nil {
		args = append(args, "--resume")
	}
	cmd := exec.Command(c.bin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	return cmd, &out
}

// rounds trains runs from scratch, each interrupted until it finishes or
// n signals are sent in all, then finished and compared with the
// uninterrupted run.
func (c *crasher) rounds(n int) {
	t := c.t
	c.ref = t.TempDir()
	begin := time.Now()
	cmd, out := c.start(c.ref)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("uninterrupted run: %v\n%s", err, out)
	}
	c.duration = time.Since(begin)
	rounds := 0
	for c.sent < n {
		dir := t.TempDir()
		for c.interrupt(dir, n) {
		}
		c.compare(dir)
		rounds++
		os.RemoveAll(dir)
	}
	t.Logf("%s: %d signals over %d runs resumed to the end, each bit-identical to the uninterrupted run (a whole run: %.1f s): %d stopped with a checkpoint, %d killed (%d before the first checkpoint)",
		c.name, c.sent, rounds, c.duration.Seconds(), c.saved, c.died, c.early)
}

// interrupt starts (or resumes) the run in dir and, while fewer than n
// signals have been sent, signals it after a random delay. It reports
// whether the run was interrupted (false: it finished).
func (c *crasher) interrupt(dir string, n int) bool {
	t := c.t
	_, err := os.Stat(filepath.Join(dir, train.LastCheckpoint))
	fresh, begin := err != nil, time.Now()
	if !fresh && trainedAll(t, dir) {
		// The last signal came after the run had saved its last epoch
		// but before it exited: the run finished.
		return false
	}
	cmd, out := c.start(dir)
	if c.sent >= n {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("the last resume in %s: %v\n%s", dir, err, out)
		}
		return false
	}
	delay := time.Duration(c.rng.Int64N(int64(c.duration) * 6 / 5))
	sig := c.signal(c.sent)
	timer := time.AfterFunc(delay, func() { _ = cmd.Process.Signal(sig) })
	err = cmd.Wait()
	if !timer.Stop() && err == nil {
		// The signal came as the run exited: count it, the run finished.
		c.sent++
		return false
	}
	if err == nil {
		if fresh {
			// A whole run finished before the signal: follow the machine's
			// current speed (other load slows the reference run too).
			c.duration = time.Since(begin)
		}
		return false
	}
	c.sent++
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("run in %s: %v", dir, err)
	}
	ws := ee.Sys().(syscall.WaitStatus)
	_, ckErr := os.Stat(filepath.Join(dir, train.LastCheckpoint))
	switch {
	case ws.Signaled() && ws.Signal() == sig:
		c.died++
		if ckErr != nil {
			c.early++
		}
	case ws.Exited() && ws.ExitStatus() == 128+int(sig) && sig != syscall.SIGKILL:
		c.saved++
		c.checkWholeStep(dir, out)
	default:
		t.Fatalf("run in %s after %v at %v: %v (want exit status %d or death by the signal)\n%s", dir, sig, delay, err, 128+int(sig), out)
	}
	return true
}

// trainedAll reports whether the checkpoint in dir has trained all its
// run's epochs, which vit-train refuses to resume.
func trainedAll(t *testing.T, dir string) bool {
	ck, err := train.LoadCheckpoint(filepath.Join(dir, train.LastCheckpoint))
	if err != nil {
		t.Fatalf("checkpoint in %s: %v", dir, err)
	}
	return ck.State.Epoch >= ck.Config.Epochs && ck.State.Batch == 0
}

// checkWholeStep checks that an interrupt's checkpoint is at a whole
// optimiser step.
func (c *crasher) checkWholeStep(dir string, out *bytes.Buffer) {
	ck, err := train.LoadCheckpoint(filepath.Join(dir, train.LastCheckpoint))
	if err != nil {
		c.t.Fatalf("checkpoint after an interrupt: %v\n%s", err, out)
	}
	if a := ck.Config.Optim.AccumSteps; ck.State.Batch%a != 0 {
		c.t.Fatalf("checkpoint at batch %d, inside an accumulation group of %d\n%s", ck.State.Batch, a, out)
	}
}

// compare checks a finished run in dir against the uninterrupted one.
func (c *crasher) compare(dir string) {
	t := c.t
	a, err := train.LoadCheckpoint(filepath.Join(c.ref, train.LastCheckpoint))
	if err != nil {
		t.Fatal(err)
	}
	b, err := train.LoadCheckpoint(filepath.Join(dir, train.LastCheckpoint))
	if err != nil {
		t.Fatal(err)
	}
	if a.State != b.State {
		t.Fatalf("%s: state %+v, uninterrupted %+v", dir, b.State, a.State)
	}
	tensors := func(ck *train.Checkpoint) map[string][]float32 {
		m := map[string][]float32{}
		for _, p := range ck.Params {
			m[p.Name] = p.Data
		}
		for _, p := range append(slices.Clone(ck.Optim), ck.EMA...) {
			m[p.Name] = p.Data
		}
		return m
	}
	ta, tb := tensors(a), tensors(b)
	if len(ta) != len(tb) {
		t.Fatalf("%s: %d tensors, uninterrupted %d", dir, len(tb), len(ta))
	}
	for name, v := range ta {
		if !slices.Equal(v, tb[name]) {
			t.Fatalf("%s: tensor %s differs from the uninterrupted run's", dir, name)
		}
	}
	c.compareLog(dir, "steps", "step", "loss", "lr", "grad_norm")
	c.compareLog(dir, "epochs", "epoch", "step", "val_loss", "val_top1", "ema_top1")
	c.checkEvents(dir)
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if atomicfile.IsTemp(e.Name()) {
			t.Errorf("%s: temporary file %s left after the last resume", dir, e.Name())
		}
	}
}

// compareLog checks that a log holds the uninterrupted run's records, in
// order and once each, with equal values of fields.
func (c *crasher) compareLog(dir, name string, fields ...string) {
	t := c.t
	want, err := metrics.Read(c.ref, name)
	if err != nil {
		t.Fatal(err)
	}
	got, err := metrics.Read(dir, name)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %s has %d records, the uninterrupted run's %d", dir, name, len(got), len(want))
	}
	for i := range want {
		for _, f := range fields {
			if !(got[i][f] == want[i][f] || (got[i][f] != got[i][f] && want[i][f] != want[i][f])) {
				t.Fatalf("%s: %s record %d: %s = %v, uninterrupted %v", dir, name, i+1, f, got[i][f], want[i][f])
			}
		}
	}
}

// checkEvents checks that the event files of dir hold each (tag, step)
// once, no partial record, and the losses of its steps and epochs logs.
func (c *crasher) checkEvents(dir string) {
	t := c.t
	files, err := tfevents.Files(dir)
	if err != nil {
		t.Fatal(err)
	}
	scalars := map[string]float32{}
	for _, p := range files {
		f, err := tfevents.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if f.Partial >= 0 {
			t.Fatalf("%s: a partial record at offset %d after the last resume", p, f.Partial)
		}
		for _, e := range f.Events[1:] {
			for _, v := range e.Values {
				key := fmt.Sprintf("%s@%d", v.Tag, e.Step)
				if _, ok := scalars[key]; ok {
					t.Fatalf("%s: %s shows twice in the event files", p, key)
				}
				scalars[key] = v.Scalar
			}
		}
	}
	for _, log := range []struct{ name, key, field string }{{"steps", "step", "loss"}, {"epochs", "epoch", "val_loss"}} {
		recs, err := metrics.Read(dir, log.name)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, r := range recs {
			key := fmt.Sprintf("%s/%s@%d", log.name, log.field, int64(r[log.key]))
			if got, ok := scalars[key]; !ok || got != float32(r[log.field]) {
				t.Fatalf("%s: event %s = %v (present %v), %s.csv %v", dir, key, got, ok, log.name, r[log.field])
			}
			n++
		}
		events := 0
		for key := range scalars {
			if strings.HasPrefix(key, log.name+"/"+log.field+"@") {
				events++
			}
		}
		if events != n {
			t.Fatalf("%s: %d %s/%s events, %s.csv has %d records", dir, events, log.name, log.field, log.name, n)
		}
	}
}
