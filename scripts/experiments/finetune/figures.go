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

// computeFigure is the figure's file name in the report folder, beside
// the report o writes (a --core run's has its own).
func computeFigure(o options) string { return study.ReportName(name, o.core) + "_top1_compute.png" }

// armColors are the arms' colours, in the order of arms.
var armColors = []color.Color{
	color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	color.RGBA{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff},
	color.RGBA{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff},
	color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	color.RGBA{R: 0xbc, G: 0xbd, B: 0x22, A: 0xff},
	color.RGBA{R: 0x17, G: 0xbe, B: 0xcf, A: 0xff},
	color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
	color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
}

// WriteFigures draws the top-1 against compute figure into dir.
func (r *report) WriteFigures(dir string) error {
	p, err := computeChart(r)
	if err != nil {
		return err
	}
	return study.SavePlot(filepath.Join(dir, computeFigure(r.Opts)), p, 9*vg.Inch, 6*vg.Inch)
}

// computeChart plots each arm's mean test top-1 (the standard deviation
// over seeds as error bars) against its training compute per seed.
func computeChart(r *report) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Fashion-MNIST test top-1 against training compute (mean ± std over %s)", r.seedCount())
	p.X.Label.Text = "training compute per seed (TFLOP: 3 × forward FLOPs × images seen)"
	p.Y.Label.Text = "top-1 (%)"
	p.Legend.Top = false
	p.Legend.Left = false
	p.Add(plotter.NewGrid())
	lo, hi, xmax := math.Inf(1), math.Inf(-1), 0.0
	n := 0
	for i, a := range r.Arms {
		s := study.Summarize(a.Top1)
		if s.N == 0 || math.IsNaN(a.TrainFLOPs) {
			continue
		}
		x := a.TrainFLOPs / 1e12
		sc, err := plotter.NewScatter(plotter.XYs{{X: x, Y: s.Mean}})
		if err != nil {
			return nil, err
		}
		sc.Color, sc.Radius = armColors[i%len(armColors)], vg.Points(4)
		sc.Shape = draw.CircleGlyph{}
		if a.Arm.Distilled() {
			sc.Shape = draw.TriangleGlyph{}
		}
		p.Add(sc)
		std := s.Std
		if math.IsNaN(std) {
			std = 0
		}
		if std > 0 {
			eb, err := plotter.NewYErrorBars(study.ErrPoints{{x, s.Mean, std}})
			if err != nil {
				return nil, err
			}
			eb.LineStyle.Color = sc.Color
			p.Add(eb)
		}
		p.Legend.Add(fmt.Sprintf("(%s) %s: %s%%", a.Arm.Letter, a.Arm.Label, study.PM(s)), sc)
		lo, hi, xmax = math.Min(lo, s.Mean-std), math.Max(hi, s.Mean+std), math.Max(xmax, x)
		n++
	}
	if n == 0 {
		p.Title.Text += ": no finished arm"
		return p, nil
	}
	p.X.Min, p.X.Max = 0, xmax*1.05
	// Room below the points for the legend.
	p.Y.Min = math.Max(0, math.Floor(lo-0.9*(hi-lo)-1))
	p.Y.Max = math.Ceil(hi + 0.5)
	return p, nil
}
