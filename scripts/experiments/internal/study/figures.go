package study

import (
	"bytes"
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// ErrPoints are points with a symmetric y error: (x, y, error).
type ErrPoints [][3]float64

func (e ErrPoints) Len() int                        { return len(e) }
func (e ErrPoints) XY(i int) (float64, float64)     { return e[i][0], e[i][1] }
func (e ErrPoints) YError(i int) (float64, float64) { return e[i][2], e[i][2] }

// ErrPointsX are points with a symmetric x error: (x, y, error).
type ErrPointsX [][3]float64

func (e ErrPointsX) Len() int                        { return len(e) }
func (e ErrPointsX) XY(i int) (float64, float64)     { return e[i][0], e[i][1] }
func (e ErrPointsX) XError(i int) (float64, float64) { return e[i][2], e[i][2] }

// EpochTicks labels whole epochs: every one up to 12, then about 10 labels.
type EpochTicks struct{}

// Ticks implements plot.Ticker.
func (EpochTicks) Ticks(lo, hi float64) []plot.Tick {
	step := max(1, int(math.Ceil((hi-lo)/10)))
	if hi-lo <= 12 {
		step = 1
	}
	var ticks []plot.Tick
	for e := int(math.Ceil(lo)); float64(e) <= hi; e++ {
		t := plot.Tick{Value: float64(e)}
		if e%step == 0 || step == 1 {
			t.Label = fmt.Sprint(e)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// SavePlot draws p on a w × h white canvas and writes it as a PNG.
func SavePlot(path string, p *plot.Plot, w, h vg.Length) (err error) {
	c := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(96), vgimg.UseBackgroundColor(color.White))
	func() {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("drawing %s: %v", path, r)
			}
		}()
		p.Draw(draw.Crop(draw.New(c), 0.1*vg.Inch, -0.1*vg.Inch, 0.1*vg.Inch, -0.1*vg.Inch))
	}()
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&buf); err != nil {
		return fmt.Errorf("encoding %s: %w", path, err)
	}
	return WriteFileAtomic(path, buf.Bytes())
}
