package viz

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Size of a training-curve picture: 6 × 4 inches, 576 × 384 pixels at DPI.
const (
	ChartWidth  = 6 * vg.Inch
	ChartHeight = 4 * vg.Inch
)

// Series is one curve of a chart: Y against X.
type Series struct {
	Label string
	X, Y  []float64
	// Points marks each value (for per-epoch values) in addition to the line.
	Points bool
}

// Chart is one training-curve picture of a run.
type Chart struct {
	File                  string // file name in the run folder, such as "loss.png"
	Title, XLabel, YLabel string
	Series                []Series // only those with at least one point
	// LegendBottom puts the legend in the lower right corner rather than
	// the upper right (for curves that rise).
	LegendBottom bool
}

// ExtractSeries returns records[i][y] against records[i][x] for the records
// that hold both as finite numbers (metrics.Read turns JSON nulls into NaN),
// in record order.
func ExtractSeries(label string, records []map[string]float64, x, y string, points bool) Series {
	s := Series{Label: label, Points: points}
	for _, r := range records {
		xv, okx := r[x]
		yv, oky := r[y]
		if okx && oky && finite(xv) && finite(yv) {
			s.X = append(s.X, xv)
			s.Y = append(s.Y, yv)
		}
	}
	return s
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// RunCharts returns the charts of a run from its step records (steps.jsonl:
// step, epoch, loss, lr, grad_norm, images_per_s) and epoch records
// (epochs.jsonl: epoch, step, train_loss, val_loss, val_top1, ema_top1, lr,
// images_per_s, …), all against the epoch (fractional for step records):
//
//	loss.png        training loss per logged step and per epoch, validation loss
//	top1.png        validation top-1 and, when logged, EMA top-1 (percent)
//	lr.png          learning rate per logged step (per epoch when fewer
//	                than two steps were logged)
//	throughput.png  training images/s per logged step and per epoch
//
// Series without any finite value are left out, and charts without any
// series too.
func RunCharts(steps, epochs []map[string]float64) []Chart {
	charts := []Chart{
		{File: "loss.png", Title: "Loss", YLabel: "cross-entropy", Series: []Series{
			ExtractSeries("train (step)", steps, "epoch", "loss", false),
			ExtractSeries("train (epoch mean)", epochs, "epoch", "train_loss", true),
			ExtractSeries("validation", epochs, "epoch", "val_loss", true),
		}},
		{File: "top1.png", Title: "Validation top-1 accuracy", YLabel: "top-1 (%)", LegendBottom: true, Series: []Series{
			ExtractSeries("model", epochs, "epoch", "val_top1", true),
			ExtractSeries("EMA", epochs, "epoch", "ema_top1", true),
		}},
		{File: "lr.png", Title: "Learning rate", YLabel: "learning rate", Series: []Series{lrSeries(steps, epochs)}},
		{File: "throughput.png", Title: "Training throughput", YLabel: "images/s", LegendBottom: true, Series: []Series{
			ExtractSeries("step", steps, "epoch", "images_per_s", false),
			ExtractSeries("epoch", epochs, "epoch", "images_per_s", true),
		}},
	}
	out := charts[:0]
	for _, c := range charts {
		c.XLabel = "epoch"
		kept := c.Series[:0]
		for _, s := range c.Series {
			if len(s.X) > 0 {
				kept = append(kept, s)
			}
		}
		c.Series = kept
		if len(kept) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// lrSeries is the learning rate of the logged steps, or, when fewer than
// two were logged (a run shorter than log_every steps), of the epochs'
// ends, drawn as points.
func lrSeries(steps, epochs []map[string]float64) Series {
	s := ExtractSeries("lr", steps, "epoch", "lr", false)
	if len(s.X) >= 2 {
		return s
	}
	if e := ExtractSeries("lr", epochs, "epoch", "lr", true); len(e.X) > len(s.X) {
		return e
	}
	s.Points = true
	return s
}

// seriesColors are the line colours, in series order.
var seriesColors = []color.Color{
	color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
	color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
}

// Plot builds the chart's gonum plot.
func (c Chart) Plot() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = c.Title
	p.X.Label.Text = c.XLabel
	p.X.Tick.Marker = epochTicks{}
	p.Y.Label.Text = c.YLabel
	p.Add(plotter.NewGrid())
	p.Legend.Top = !c.LegendBottom
	for i, s := range c.Series {
		xy := make(plotter.XYs, len(s.X))
		for j := range xy {
			xy[j] = plotter.XY{X: s.X[j], Y: s.Y[j]}
		}
		col := seriesColors[i%len(seriesColors)]
		line, err := plotter.NewLine(xy)
		if err != nil {
			return nil, fmt.Errorf("viz: %s series %q: %w", c.File, s.Label, err)
		}
		line.Color = col
		line.Width = vg.Points(1.2)
		p.Add(line)
		thumbs := []plot.Thumbnailer{line}
		if s.Points {
			sc, err := plotter.NewScatter(xy)
			if err != nil {
				return nil, fmt.Errorf("viz: %s series %q: %w", c.File, s.Label, err)
			}
			sc.Color = col
			sc.Shape = draw.CircleGlyph{}
			sc.Radius = vg.Points(2.5)
			p.Add(sc)
			thumbs = append(thumbs, sc)
		}
		if len(c.Series) > 1 { // a single curve is named by the title
			p.Legend.Add(s.Label, thumbs...)
		}
	}
	if len(c.Series) > 1 {
		legendRoom(p, len(c.Series), c.LegendBottom)
	}
	return p, nil
}

// legendRoom widens the y axis of p so that a legend of rows lines, at the
// top (or the bottom) of the plot, sits above (below) every data point: it
// takes legendRowShare of the data's span per line.
func legendRoom(p *plot.Plot, rows int, bottom bool) {
	span := p.Y.Max - p.Y.Min
	if !(span > 0) {
		span = math.Max(math.Abs(p.Y.Max), 1)
	}
	room := span * legendRowShare * float64(rows)
	if bottom {
		p.Y.Min -= room
	} else {
		p.Y.Max += room
	}
}

// legendRowShare is the part of the data's span left free per legend line.
const legendRowShare = 0.12

// Save writes the chart to path as a ChartWidth × ChartHeight PNG.
func (c Chart) Save(path string) error {
	p, err := c.Plot()
	if err != nil {
		return err
	}
	return savePNG(path, ChartWidth, ChartHeight, func(dc draw.Canvas) {
		p.Draw(draw.Crop(dc, chartMargin, -2*chartMargin, chartMargin, -chartMargin))
	})
}

// epochTicks labels whole epochs when the axis spans at least two (at most
// about ten labels, with unlabelled ticks between), and falls back to
// gonum's default ticks on shorter spans.
type epochTicks struct{}

// Ticks returns the ticks of [min, max].
func (epochTicks) Ticks(min, max float64) []plot.Tick {
	if !(max-min >= 2) {
		return plot.DefaultTicks{}.Ticks(min, max)
	}
	step := math.Max(1, math.Ceil((max-min)/10))
	var ticks []plot.Tick
	for v := math.Ceil(min/step) * step; v <= max; v += step {
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
		if step == 1 && v+0.5 <= max {
			ticks = append(ticks, plot.Tick{Value: v + 0.5})
		} else if step > 1 {
			for k := 1.0; k < step && v+k <= max; k++ {
				ticks = append(ticks, plot.Tick{Value: v + k})
			}
		}
	}
	return ticks
}

// chartMargin is the white space around a chart (twice that on the right,
// where the last points and the legend sit).
const chartMargin = 0.06 * vg.Inch

// PlotRun writes the charts of RunCharts(steps, epochs) into the run folder
// dir (loss.png, top1.png, lr.png, throughput.png), replacing earlier ones;
// it is meant to be called after every epoch. steps and epochs are the
// records of steps.jsonl and epochs.jsonl (metrics.Read).
func PlotRun(dir string, steps, epochs []map[string]float64) error {
	for _, c := range RunCharts(steps, epochs) {
		if err := c.Save(filepath.Join(dir, c.File)); err != nil {
			return err
		}
	}
	return nil
}
