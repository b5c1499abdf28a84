package train

import (
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"github.com/vit-train/vit-train/formats/metrics"
	"github.com/vit-train/vit-train/formats/tfevents"
	"github.com/vit-train/vit-train/train/checkpoint"
)

// configTag is the tag of the resolved configuration's text summary.
const configTag = "config"

// eventLog writes a run's metrics records and its resolved configuration
// to a TensorBoard event file in the run folder (the tensorboard setting):
// each record of the steps and epochs logs becomes one event whose step is
// the record's step (steps log) or epoch (epochs log), holding every other
// field as the scalar LOG/FIELD (steps/loss, epochs/val_top1, …); fields
// that are NaN (ema_top1 without EMA, say) are left out, and a record
// with nothing else writes no event.
type eventLog struct {
	w *tfevents.Writer
}

// cutEventFiles prepares the run folder's event files for a run and
// returns the path of the run's own (tfevents.NextPath): a fresh
// run (resume nil) removes them; a resumed run keeps in each the events up
// to its position — steps up to resume.Step, epochs up to resume.Epoch and
// configurations before resume.Step (the resumed run records its own at
// resume.Step) — so that no step shows twice, replacing each file that
// changes atomically. It returns what it repaired, one note per partial
// record dropped.
func cutEventFiles(dir string, resume *checkpoint.State) (next string, notes []string, err error) {
	files, err := tfevents.Files(dir)
	if err != nil {
		return "", nil, err
	}
	next = tfevents.NextPath(dir, files, time.Now())
	for _, f := range files {
		if resume == nil {
			if err := os.Remove(f); err != nil {
				return "", nil, fmt.Errorf("tensorboard: %w", err)
			}
			continue
		}
		n, err := tfevents.Filter(f, func(e tfevents.Event) bool { return keepEvent(e, *resume) })
		if err != nil {
			return "", nil, err
		}
		notes = append(notes, n...)
	}
	return next, notes, nil
}

// keepEvent reports whether a run resumed at s keeps the event e: a
// record of the steps or epochs log at or before s, or a configuration
// recorded before s. Events of other tags are kept.
func keepEvent(e tfevents.Event, s checkpoint.State) bool {
	if len(e.Values) == 0 {
		return true
	}
	tag := e.Values[0].Tag
	switch {
	case strings.HasPrefix(tag, "steps/"):
		return e.Step <= int64(s.Step)
	case strings.HasPrefix(tag, "epochs/"):
		return e.Step <= int64(s.Epoch)
	case tag == configTag:
		return e.Step < int64(s.Step)
	}
	return true
}

// openEventLog starts the event file path and records config (the
// resolved configuration's YAML) in it at step, as a YAML code block.
func openEventLog(path string, config []byte, step int) (*eventLog, error) {
	w, err := tfevents.Create(path, time.Now())
	if err != nil {
		return nil, err
	}
	text := "```yaml\n" + string(config) + "```\n"
	if err := w.Write(tfevents.Event{Step: int64(step), Values: []tfevents.Value{tfevents.TextValue(configTag, text)}}); err != nil {
		w.Close()
		return nil, err
	}
	return &eventLog{w: w}, nil
}

// write records rec, a record of the metrics log named log, as one event
// at the value of its field key. A nil eventLog writes nothing.
func (l *eventLog) write(log, key string, rec []metrics.Field) error {
	if l == nil {
		return nil
	}
	step := math.NaN()
	values := make([]tfevents.Value, 0, len(rec))
	for _, f := range rec {
		switch {
		case f.Name == key:
			step = f.Value
		case !math.IsNaN(f.Value):
			values = append(values, tfevents.ScalarValue(log+"/"+f.Name, f.Value))
		}
	}
	if math.IsNaN(step) {
		return fmt.Errorf("tensorboard: a %s record has no %q field", log, key)
	}
	if len(values) == 0 {
		return nil
	}
	return l.w.Write(tfevents.Event{Step: int64(step), Values: values})
}

// sync commits the event file to stable storage.
func (l *eventLog) sync() error {
	if l == nil {
		return nil
	}
	return l.w.Sync()
}

// close closes the event file.
func (l *eventLog) close() {
	if l != nil {
		l.w.Close()
	}
}
