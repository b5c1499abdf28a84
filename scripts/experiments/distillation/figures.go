package main

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/vit-train/vit-train/scripts/experiments/internal/study"
)

// barFigure and curveFigure are the figures' file names in the report
// folder, beside the report o writes (see reportName).
func barFigure(o options) string   { return reportName(o) + "_top1.png" }
func curveFigure(o options) string { return reportName(o) + "_curves.png" }

var (
	headColors = []color.Color{
		color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, // class head
		color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}, // distillation head
		color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, // both heads
	}
	armColors = []color.Color{
		color.RGBA{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff},
		color.RGBA{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff},
		color.RGBA{R: 0x17, G: 0xbe, B: 0xcf, A: 0xff},
		color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
		color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
		color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
		color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
		color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
		color.RGBA{R: 0xbc, G: 0xbd, B: 0x22, A: 0xff},
	}
	// teacherColors are the teachers' lines, in the report's teacher order.
	teacherColors = []color.Color{
		color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
		color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
		color.RGBA{R: 0xe3, G: 0x77, B: 0xc2, A: 0xff},
		color.Black,
	}
)

// WriteFigures draws the top-1 bar chart and the validation curves into dir.
func (r *report) WriteFigures(dir string) error {
	bars, err := barChart(r)
	if err != nil {
		return err
	}
	if err := study.SavePlot(filepath.Join(dir, barFigure(r.Opts)), bars, 10*vg.Inch, 5.5*vg.Inch); err != nil {
		return err
	}
	curves, err := curveChart(r)
	if err != nil {
		return err
	}
	return study.SavePlot(filepath.Join(dir, curveFigure(r.Opts)), curves, 9*vg.Inch, 5.5*vg.Inch)
}

// barChart plots each arm's mean test top-1 per head, with the standard
// deviation over seeds as error bars and the teachers as dashed lines.
func barChart(r *report) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Fashion-MNIST test top-1 by arm (mean ± std over %s; %s at 28 px)", r.seedCount(), study.Plural(r.Opts.epochs, "epoch"))
	p.Y.Label.Text = "top-1 (%)"
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	var names []string
	lo, hi := math.Inf(1), math.Inf(-1)
	offsets := []float64{-0.27, 0, 0.27}
	heads := []string{"class head", "distillation head", "both heads (inference)"}
	legend := make([]plot.Thumbnailer, 3)
	group := 0
	for _, a := range r.Arms {
		if len(a.Seeds) == 0 {
			continue
		}
		names = append(names, a.Arm.Short)
		for h, xs := range [][]float64{a.Cls, a.Dist, a.Avg} {
			if !a.Arm.Distilled() && h != 0 {
				continue
			}
			s := study.Summarize(xs)
			if s.N == 0 {
				continue
			}
			x := float64(group) + offsets[h]
			if !a.Arm.Distilled() {
				x = float64(group)
			}
			b, err := plotter.NewBarChart(plotter.Values{s.Mean}, vg.Points(17))
			if err != nil {
				return nil, err
			}
			b.XMin = x
			b.Color = headColors[h]
			b.LineStyle.Width = 0
			p.Add(b)
			legend[h] = b
			std := s.Std
			if math.IsNaN(std) {
				std = 0
			}
			if std > 0 {
				eb, err := plotter.NewYErrorBars(study.ErrPoints{{x, s.Mean, std}})
				if err != nil {
					return nil, err
				}
				eb.LineStyle.Width = vg.Points(1.2)
				p.Add(eb)
			}
			lo, hi = math.Min(lo, s.Mean-std), math.Max(hi, s.Mean+std)
		}
		group++
	}
	if group == 0 {
		p.Title.Text += ": no finished arm"
		return p, nil
	}
	for h, t := range legend {
		if t != nil {
			p.Legend.Add(heads[h], t)
		}
	}
	for i, t := range r.Teachers {
		if !t.Done {
			continue
		}
		l, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: t.Top1}, {X: float64(group) - 0.5, Y: t.Top1}})
		if err != nil {
			return nil, err
		}
		l.Dashes = []vg.Length{vg.Points(6), vg.Points(3 + 2*float64(i))}
		l.Width = vg.Points(1.2)
		l.Color = teacherColors[i%len(teacherColors)]
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%s teacher %.2f%%", t.Name, t.Top1), l)
		lo, hi = math.Min(lo, t.Top1), math.Max(hi, t.Top1)
	}
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.6, float64(group)-0.4
	// Zoom on the measured range (the bars start at the axis's bottom),
	// with room above the bars for the legend.
	p.Y.Min = math.Floor(lo - 1)
	p.Y.Max = math.Ceil(hi + 0.35*(hi-p.Y.Min) + 0.5)
	return p, nil
}

// curveChart plots each arm's validation top-1 per epoch, the mean
// over its seeds.
func curveChart(r *report) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "Validation top-1 per epoch (students: mean over seeds, both heads for distilled models; teachers dashed)"
	p.X.Label.Text = "epoch"
	p.Y.Label.Text = "top-1 (%)"
	p.Legend.Top = false
	p.Legend.Left = false
	p.Add(plotter.NewGrid())
	for i, a := range r.Arms {
		if len(a.Curves) == 0 {
			continue
		}
		n := len(a.Curves[0])
		for _, c := range a.Curves {
			n = min(n, len(c))
		}
		xy := make(plotter.XYs, 0, n)
		for e := 0; e < n; e++ {
			col := make([]float64, len(a.Curves))
			for s, c := range a.Curves {
				col[s] = c[e]
			}
			if m := study.Summarize(col).Mean; !math.IsNaN(m) {
				xy = append(xy, plotter.XY{X: float64(e + 1), Y: m})
			}
		}
		if len(xy) == 0 {
			continue
		}
		col := armColors[i%len(armColors)]
		line, err := plotter.NewLine(xy)
		if err != nil {
			return nil, err
		}
		line.Color, line.Width = col, vg.Points(1.5)
		sc, err := plotter.NewScatter(xy)
		if err != nil {
			return nil, err
		}
		sc.Color, sc.Shape, sc.Radius = col, draw.CircleGlyph{}, vg.Points(2.5)
		p.Add(line, sc)
		p.Legend.Add(fmt.Sprintf("%s (%s)", a.Arm.Label, study.Plural(len(a.Seeds), "seed")), line, sc)
		p.X.Max = math.Max(p.X.Max, float64(len(xy))+0.5)
	}
	for i, t := range r.Teachers {
		if !t.Done {
			continue
		}
		xy := make(plotter.XYs, 0, len(t.Curve))
		for e, v := range t.Curve {
			if !math.IsNaN(v) {
				xy = append(xy, plotter.XY{X: float64(e + 1), Y: v})
			}
		}
		if len(xy) == 0 {
			continue
		}
		line, err := plotter.NewLine(xy)
		if err != nil {
			return nil, err
		}
		line.Color, line.Width = color.Black, vg.Points(1)
		line.Dashes = []vg.Length{vg.Points(6), vg.Points(3 + 2*float64(i))}
		sc, err := plotter.NewScatter(xy)
		if err != nil {
			return nil, err
		}
		sc.Color, sc.Shape, sc.Radius = color.Black, draw.CrossGlyph{}, vg.Points(2.5)
		p.Add(line, sc)
		p.Legend.Add(fmt.Sprintf("%s teacher (%s)", t.Name, study.Plural(len(xy), "epoch")), line, sc)
		p.X.Max = math.Max(p.X.Max, float64(len(xy))+0.5)
	}
	p.X.Min = 0.5
	p.X.Tick.Marker = study.EpochTicks{}
	return p, nil
}
