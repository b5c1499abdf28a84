package train

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/vit-train/vit-train/data"
	"github.com/vit-train/vit-train/formats/atomicfile"
	"github.com/vit-train/vit-train/formats/metrics"
	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/train/checkpoint"
)

// recorder is what a run reports: the steps and epochs metrics logs, the
// TensorBoard event file, the progress bar, the lines printed to
// Options.Out and the list of skipped files. Rank 0 alone writes; the
// other ranks' recorder prints to io.Discard and opens no file.
type recorder struct {
	cfg     Config
	dir     string    // the run folder
	out     io.Writer // Options.Out
	lead    bool      // rank 0
	bar     bool      // draw a progress bar
	records func(name string, log RecordLog) RecordLog
	after   func(dir string) error // Options.AfterEpoch

	stepsLog RecordLog // nil until opened
	epochLog RecordLog
	events   *eventLog // nil unless cfg.TensorBoard
	skipped  int       // files skipped as unreadable, as last reported
	teacher  *Result   // the teacher's evaluation, when it has one
}

// newRecorder is the recorder of a run of cfg with opts on rank 0 (lead)
// or another rank; open opens its files.
func newRecorder(cfg Config, opts Options, lead bool) *recorder {
	return &recorder{cfg: cfg, dir: opts.Dir, out: opts.Out, lead: lead, bar: cfg.Progress && !opts.NoProgressBar && lead,
		records: opts.Hooks.Records, after: opts.AfterEpoch}
}

// open opens the steps and epochs logs and the event files: afresh, or,
// when resuming, cut back to the position s (steps up to its step, epochs
// up to its completed epochs), printing what was repaired.
func (r *recorder) open(s checkpoint.State, resume bool) error {
	var keepSteps, keepEpochs *metrics.Keep
	if resume {
		keepSteps = &metrics.Keep{Field: "step", Max: float64(s.Step)}
		keepEpochs = &metrics.Keep{Field: "epoch", Max: float64(s.Epoch)}
	}
	steps, err := metrics.Open(r.dir, "steps", keepSteps)
	if err != nil {
		return err
	}
	r.stepsLog = r.wrap("steps", steps)
	epochs, err := metrics.Open(r.dir, "epochs", keepEpochs)
	if err != nil {
		return err
	}
	r.epochLog = r.wrap("epochs", epochs)
	eventNotes, err := r.openEvents(s, resume)
	if err != nil {
		return err
	}
	for _, n := range append(append(steps.Notes, epochs.Notes...), eventNotes...) {
		fmt.Fprintf(r.out, "note: %s\n", n)
	}
	return nil
}

// wrap is the log the loop writes name's records to: log, or what
// Hooks.Records makes of it.
func (r *recorder) wrap(name string, log *metrics.Log) RecordLog {
	if r.records == nil {
		return log
	}
	return r.records(name, log)
}

// openEvents cuts the run folder's event files back to the position s
// (removes them, for a fresh run) and, with cfg.TensorBoard, starts the
// run's own event file.
func (r *recorder) openEvents(s checkpoint.State, resume bool) (notes []string, err error) {
	var at *checkpoint.State
	if resume {
		at = &s
	}
	path, notes, err := cutEventFiles(r.dir, at)
	if err != nil || !r.cfg.TensorBoard {
		return notes, err
	}
	y, err := r.cfg.YAML()
	if err != nil {
		return nil, err
	}
	r.events, err = openEventLog(path, y, s.Step)
	return notes, err
}

// sync commits the logs and the event file to stable storage, so that
// they hold every record up to a checkpoint about to be written.
func (r *recorder) sync() error {
	if !r.lead {
		return nil
	}
	if err := r.stepsLog.Sync(); err != nil {
		return err
	}
	if err := r.epochLog.Sync(); err != nil {
		return err
	}
	return r.events.sync()
}

// close closes the files open.
func (r *recorder) close() {
	if r.stepsLog != nil {
		r.stepsLog.Close()
	}
	if r.epochLog != nil {
		r.epochLog.Close()
	}
	r.events.close()
}

// announce prints the run's first lines: the model and the data, the
// precision, the data-parallel job of ranks processes, the position s a
// resumed run starts from.
func (r *recorder) announce(net model.Network, ds *Datasets, stepsPerEpoch, ranks int, s checkpoint.State) {
	cfg := r.cfg
	fmt.Fprintf(r.out, "%s; data %s: %d train / %d eval images; %s per epoch\n",
		net.Describe(), cfg.Data.Dataset, ds.Train.Len(), ds.Eval.Len(), plural(stepsPerEpoch, "step"))
	if v, err := cfg.Model.Products(); err == nil && !v.IsFP32() {
		fmt.Fprintf(r.out, "model.precision = %s: matrix products in %s\n", cfg.Model.Precision, v.Describe())
	}
	if ranks > 1 {
		b := cfg.Data.BatchSize
		fmt.Fprintf(r.out, "data-parallel: %d processes × data.batch_size %d = global batch %d images\n", ranks, b, ranks*b)
	}
	if s.Epoch > 0 || s.Batch > 0 {
		fmt.Fprintf(r.out, "resuming at epoch %d, batch %d (step %d)\n", s.Epoch+1, s.Batch, s.Step)
	}
}

// logStep writes every log_every-th step, and the run's last, to the steps
// log and updates the progress bar, at position s of an epoch of end
// batches; lossNames name res.Extra.
func (r *recorder) logStep(s checkpoint.State, res StepResult, lossNames []string, m *meter, end int) error {
	m.show(r.cfg, s, res)
	last := s.Epoch == r.cfg.Epochs-1 && s.Batch >= end
	if r.stepsLog == nil || r.cfg.LogEvery <= 0 || (s.Step%r.cfg.LogEvery != 0 && !last) {
		return nil
	}
	rec := []metrics.Field{{Name: "step", Value: float64(s.Step)}, {Name: "epoch", Value: float64(s.Epoch) + float64(s.Batch)/float64(end)},
		{Name: "loss", Value: res.Loss}, {Name: "lr", Value: res.LR}, {Name: "grad_norm", Value: res.GradNorm}, {Name: "images_per_s", Value: m.imagesPerS()}}
	for i, name := range lossNames {
		rec = append(rec, metrics.Field{Name: name, Value: res.Extra[i]})
	}
	if err := r.stepsLog.Write(rec); err != nil {
		return err
	}
	return r.events.write("steps", "step", rec)
}

// epochStats summarises the training of one epoch, or of its part since a
// resume.
type epochStats struct {
	loss, lr, imagesPerS, seconds float64
	// dataWait is the part of seconds the steps spent waiting for the
	// loader's batches.
	dataWait float64
}

// meter follows the part of an epoch a process trains: the mean loss, the
// throughput and the progress bar.
type meter struct {
	start         time.Time
	bar           *progressbar.ProgressBar
	lossSum, lr   float64
	steps, images int
}

// newMeter starts a meter for an epoch of end batches at position s.
func (r *recorder) newMeter(s checkpoint.State, end int) *meter {
	m := &meter{start: time.Now(), lr: math.NaN()}
	if r.bar {
		m.bar = progressbar.NewOptions(end, progressbar.OptionSetWriter(r.out), progressbar.OptionSetWidth(24),
			progressbar.OptionShowCount(), progressbar.OptionSetDescription(fmt.Sprintf("epoch %d/%d", s.Epoch+1, r.cfg.Epochs)),
			progressbar.OptionClearOnFinish(), progressbar.OptionThrottle(200*time.Millisecond))
		_ = m.bar.Set(s.Batch)
	}
	return m
}

func (m *meter) add(r StepResult) {
	m.lossSum += r.Loss
	m.steps++
	m.images += r.Images
	m.lr = r.LR
}

func (m *meter) imagesPerS() float64 { return float64(m.images) / time.Since(m.start).Seconds() }

// show updates the progress bar after a step, at position s.
func (m *meter) show(cfg Config, s checkpoint.State, r StepResult) {
	if m.bar == nil {
		return
	}
	m.bar.Describe(fmt.Sprintf("epoch %d/%d loss %.4f lr %.2e %.0f img/s", s.Epoch+1, cfg.Epochs, r.Loss, r.LR, m.imagesPerS()))
	_ = m.bar.Set(s.Batch)
}

// finish closes the progress bar and summarises the steps taken; the loss
// and throughput are NaN when none was (a run resumed after its epoch's
// last step).
func (m *meter) finish() epochStats {
	if m.bar != nil {
		_ = m.bar.Finish()
	}
	sec := time.Since(m.start).Seconds()
	st := epochStats{loss: math.NaN(), lr: m.lr, imagesPerS: math.NaN(), seconds: sec}
	if m.steps > 0 {
		st.loss, st.imagesPerS = m.lossSum/float64(m.steps), float64(m.images)/sec
	}
	return st
}

// recordEpoch appends the record of the epoch that ends at position s to
// the epochs log.
func (r *recorder) recordEpoch(s checkpoint.State, stats epochStats, ev Evaluation, ema *Result) error {
	if r.epochLog == nil {
		return nil
	}
	emaTop1 := math.NaN()
	if ema != nil {
		emaTop1 = ema.Top1
	}
	rec := []metrics.Field{{Name: "epoch", Value: float64(s.Epoch)}, {Name: "step", Value: float64(s.Step)},
		{Name: "train_loss", Value: stats.loss}, {Name: "val_loss", Value: ev.Loss}, {Name: "val_top1", Value: ev.Top1}, {Name: "val_top5", Value: ev.Top5},
		{Name: "ema_top1", Value: emaTop1}, {Name: "lr", Value: stats.lr}, {Name: "images_per_s", Value: stats.imagesPerS}, {Name: "epoch_seconds", Value: stats.seconds}}
	if r.cfg.Distill.Distilling() {
		rec = append(rec, metrics.Field{Name: "val_top1_cls", Value: ev.ClassHead.Top1}, metrics.Field{Name: "val_top1_dist", Value: ev.DistHead.Top1}, metrics.Field{Name: "teacher_top1", Value: r.teacherTop1()})
	}
	if err := r.epochLog.Write(rec); err != nil {
		return err
	}
	return r.events.write("epochs", "epoch", rec)
}

// teacherTop1 is the teacher's top-1 accuracy, NaN when unknown.
func (r *recorder) teacherTop1() float64 {
	if r.teacher == nil {
		return math.NaN()
	}
	return r.teacher.Top1
}

// afterEpoch runs Options.AfterEpoch (rank 0 only) after epoch; a failure
// is a warning.
func (r *recorder) afterEpoch(epoch int) {
	if !r.lead || r.after == nil {
		return
	}
	if err := r.after(r.dir); err != nil {
		fmt.Fprintf(r.out, "warning: after epoch %d: %v\n", epoch, err)
	}
}

// printEpoch prints the summary line of the epoch that ends at position s.
func (r *recorder) printEpoch(s checkpoint.State, stats epochStats, ev Evaluation, ema *Result) {
	line := fmt.Sprintf("epoch %d/%d  train loss %.4f  val loss %.4f  top-1 %.2f%%  top-5 %.2f%%  lr %.3g  %.0f img/s  %.1f s (%.1f s, %.1f%%, waiting for data)",
		s.Epoch, r.cfg.Epochs, stats.loss, ev.Loss, ev.Top1, ev.Top5, stats.lr, stats.imagesPerS, stats.seconds, stats.dataWait, 100*stats.dataWait/stats.seconds)
	if ema != nil {
		line += fmt.Sprintf("  EMA top-1 %.2f%%", ema.Top1)
	}
	if ev.ClassHead != nil {
		line += fmt.Sprintf("  (class head %.2f%%, dist head %.2f%%)", ev.ClassHead.Top1, ev.DistHead.Top1)
	}
	if r.teacher != nil {
		line += fmt.Sprintf("  teacher %.2f%%", r.teacher.Top1)
	}
	fmt.Fprintln(r.out, line)
}

// printSummary prints the result of a finished run.
func (r *recorder) printSummary(sum *Summary) {
	s := sum.State
	fmt.Fprintf(r.out, "%s accuracy %.2f%% (top-5 %.2f%%, best %.2f%% at epoch %d) after %s, %.0f s; run folder %s\n",
		r.cfg.Data.EvalSet(), sum.Last.Top1, sum.Last.Top5, s.BestTop1, s.BestEpoch, plural(r.cfg.Epochs, "epoch"), sum.Seconds, r.dir)
	if note := r.cfg.Data.HeldOutNote(); note != "" {
		fmt.Fprintf(r.out, "  the %d images scored were %s\n", sum.Last.N, note)
	}
	if h := sum.Last.ClassHead; h != nil {
		line := fmt.Sprintf("class head %.2f%%, distillation head %.2f%%, average %.2f%%", h.Top1, sum.Last.DistHead.Top1, sum.Last.Top1)
		if r.teacher != nil {
			line += fmt.Sprintf("; teacher %.2f%%", r.teacher.Top1)
		}
		fmt.Fprintln(r.out, line)
	}
}

// plural is "1 epoch", "2 epochs".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// SkippedList is the run-folder file that lists the files a run with
// data.skip_corrupt skipped as unreadable.
const SkippedList = "skipped.txt"

// reportSkipped says, at the end of an epoch, which files the training
// and evaluation data of ds skipped as unreadable (data.skip_corrupt):
// each newly skipped file with why, and the total, printed and written to
// SkippedList in the run folder (rank 0, which sees its own share of the
// training data and its share of the evaluation data).
func (r *recorder) reportSkipped(ds *Datasets) error {
	if !r.lead {
		return nil
	}
	var report strings.Builder
	total := 0
	for _, d := range []data.Dataset{ds.Train, ds.Eval} {
		if f, ok := data.FolderOf(d); ok {
			report.WriteString(f.SkipReport())
			total += len(f.Skipped())
		}
	}
	if total == 0 {
		return nil
	}
	path := filepath.Join(r.dir, SkippedList)
	if total == r.skipped {
		fmt.Fprintf(r.out, "data.skip_corrupt: %d unreadable file(s) skipped so far, none new this epoch (listed in %s)\n", total, path)
		return nil
	}
	r.skipped = total
	fmt.Fprintf(r.out, "data.skip_corrupt: %d unreadable file(s) skipped so far, each replaced by the next readable file (listed in %s):\n%s", total, path, report.String())
	return atomicfile.Write(path, func(w io.Writer) error {
		_, err := io.WriteString(w, report.String())
		return err
	})
}
